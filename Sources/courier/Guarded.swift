import Foundation

/// One value behind one lock, for state shared between the main thread, the manager's queue and
/// signal handlers. An `NSLock` rather than `Synchronization.Mutex`: like the library, so that
/// ThreadSanitizer sees the locking.
final class Guarded<Value: Sendable>: @unchecked Sendable {  // safe: the value is only touched under the lock
    private let lock = NSLock()
    // Only touched while holding `lock`, which is what makes the `@unchecked Sendable` true.
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access; keep it short and never call out of it.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// The current value.
    var current: Value { withLock { $0 } }

    /// Replaces the value.
    func set(_ newValue: Value) { withLock { $0 = newValue } }
}
