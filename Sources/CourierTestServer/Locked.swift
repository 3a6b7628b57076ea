import Foundation

/// One value guarded by one lock; the only way in is `withLock`.
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux the latter
/// uses raw futex calls that ThreadSanitizer cannot see, so every guarded access would be
/// reported as a race under `swift test --sanitize=thread`.
// @unchecked Sendable: `state` is only ever read or written inside `lock`, and `State` is Sendable.
final class Locked<State: Sendable>: @unchecked Sendable {  // safe: the state is only touched under the lock
    private let lock = NSLock()
    private var state: State

    /// Wraps `state`.
    init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state. `body` must not call out to user code.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
