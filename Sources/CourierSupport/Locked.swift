import Foundation

/// A value behind a lock: the one-lock-around-one-state-struct pattern, for the library, the
/// test server and the command lines alike (the package's one lock box).
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux `Mutex` is a
/// bare futex that ThreadSanitizer cannot see, so every access under it is reported as a race and
/// the concurrency tests could not run under TSan.
package final class Locked<Value>: @unchecked Sendable {  // safe: the value is only touched under the lock
    // @unchecked: `value` is only read or written inside `withLock`, which holds `lock`.
    // Inlinable (and so `@usableFromInline` below): every state change of every task goes through
    // `withLock`, and a call into another module that cannot be specialized cost ~1 % of a small
    // request (callgrind).
    @usableFromInline let lock = NSLock()
    // Unchecked: every access is under `lock`, so the runtime's exclusivity check (a
    // begin/end-access pair per `withLock`, ~30 per small request) could never find a conflict.
    @usableFromInline @exclusivity(unchecked) var value: Value

    @inlinable
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code from `body`.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Runs `body` as ``withLock(_:)`` does if the lock is free now, or returns `nil` at once
    /// without waiting when another thread holds it.
    @inlinable
    package func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value (one `withLock`: deciding on it and changing it belongs in one call).
    @inlinable
    package var current: Value { withLock { $0 } }

    /// Replaces the value.
    @inlinable
    package func set(_ newValue: Value) { withLock { $0 = newValue } }
}
