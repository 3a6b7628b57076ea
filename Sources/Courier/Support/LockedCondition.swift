import Foundation
internal import CourierSupport

/// A value behind a lock that a thread can also wait on: ``Locked`` plus a condition variable,
/// for state where one thread must sleep until another changes it (the journal's group commit,
/// where followers wait for a leader's `fdatasync`).
///
/// Still one lock around one state struct: the `NSCondition` is the lock. Every `withLock` ends
/// with a broadcast, so a waiter never misses a change: each change wakes every waiter, which
/// re-checks its own predicate. That is simpler to get right than targeted signals, and costs
/// nothing when nobody waits. Built on `NSCondition` (pthread mutex + condition variable) for the
/// same reason as ``Locked``: ThreadSanitizer sees it.
final class LockedCondition<Value>: @unchecked Sendable {  // safe: the value is only touched under the lock
    // @unchecked: `value` is only read or written between `condition.lock()` and `unlock()`,
    // and never while a `wait()` has released the lock (the body runs after the wait returns).
    private let condition = NSCondition()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value, then wakes every waiter. Never call out to
    /// user code from `body`.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// Waits until `ready` holds for the value, then runs `body` as ``withLock(_:)`` does. The
    /// lock is released while waiting; `ready` is checked under it after every change.
    func withLock<Result, Failure: Error>(
        when ready: (Value) -> Bool, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(value) { condition.wait() }
        return try body(&value)
    }
}
