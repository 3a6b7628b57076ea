import Foundation

/// A value behind a lock: the one-lock-around-one-state-struct pattern, for the library, the
/// test server and the command lines alike (the package's one lock box).
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux `Mutex` is a
/// bare futex that ThreadSanitizer cannot see, so every access under it is reported as a race and
/// the concurrency tests could not run under TSan.
package final class Locked<Value>: @unchecked Sendable {  // safe: the value is only touched under the lock
    // @unchecked: `value` is only read or written inside `withLock`, which holds `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code from `body`.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value (one `withLock`: deciding on it and changing it belongs in one call).
    package var current: Value { withLock { $0 } }

    /// Replaces the value.
    package func set(_ newValue: Value) { withLock { $0 = newValue } }
}
