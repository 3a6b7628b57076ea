import Foundation

/// A value behind a lock: the one-lock-around-one-state-struct pattern.
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux `Mutex` is a
/// bare futex that ThreadSanitizer cannot see, so every access under it is reported as a race and
/// the concurrency tests could not run under TSan.
final class Locked<Value>: @unchecked Sendable {  // safe: the value is only touched under the lock
    // @unchecked: `value` is only read or written inside `withLock`, which holds `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code from `body`.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
