import Foundation

/// The `OperationQueue` URLSession delivers delegate callbacks on: each callback goes straight
/// onto one serial `DispatchQueue`, in order, without building an `Operation` for it — and
/// URLSession is held back while too many callbacks wait.
///
/// FoundationNetworking wraps every callback in a `BlockOperation` (allocation, two locks, a
/// `DispatchWorkItem` capturing the caller's context, a scheduling pass) on its own internal
/// work queue, which at several requests in flight is the busiest thread in the process. Three
/// callbacks per small request made that about 37,000 instructions per request (callgrind);
/// a plain `async` onto a serial queue keeps the one guarantee URLSession needs: callbacks run
/// one at a time, in the order they were added.
///
/// **Back-pressure.** URLSession cannot pause a transfer, and libcurl reads as fast as the
/// network delivers: when the callback thread falls behind (it shares two cores with libcurl's
/// thread and, in a benchmark, the server), 16 KiB chunks pile up here — 136 to 2,950 of them at
/// the peak of a 256 MiB transfer, up to 46 MiB beyond the body. So once more than
/// ``highWater`` callbacks wait, the thread adding one (URLSession's work queue, which reads the
/// sockets) waits until half of them have run, each time for at most ``longestWait``. While it
/// waits, libcurl reads nothing, and TCP flow control holds the sender. The wait is bounded so
/// that a callback queue held up for long (a slow completion handler on the default queue)
/// slows URLSession down instead of stopping it; a callback that itself adds one never waits.
///
/// Operations added as `Operation` objects (URLSession does not, but the type allows it) still
/// run through `OperationQueue` on the same serial queue, so nothing ever runs concurrently.
final class DelegateQueue: OperationQueue, @unchecked Sendable {  // safe: see the next comment
    // @unchecked: `target`, `highWater`, `longestWait` and `onTarget` are immutable after init;
    // `backlog` is only touched while `condition` is locked; OperationQueue locks itself.

    /// Where the callbacks run.
    let target: DispatchQueue
    /// How many callbacks may wait before the thread adding one is held.
    let highWater: Int
    /// The longest one `addOperation(_:)` waits for the backlog to halve.
    let longestWait: TimeInterval

    private struct Backlog {
        /// Callbacks added and not yet finished.
        var pending = 0
        /// The most that were ever pending at once.
        var peak = 0
        /// Threads waiting for `pending` to fall to half of `highWater`.
        var waiters = 0
    }
    private let condition = NSCondition()
    private var backlog = Backlog()
    /// Set on `target`, so that a callback adding another one is recognised and never waits.
    private let onTarget = DispatchSpecificKey<Bool>()

    init(target: DispatchQueue, name: String, highWater: Int = 64, longestWait: TimeInterval = 0.02) {
        self.target = target
        self.highWater = max(1, highWater)
        self.longestWait = longestWait
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
        // `underlyingQueue` is `unowned(unsafe)` in swift-corelibs-foundation; `target` keeps it alive.
        underlyingQueue = target
        target.setSpecific(key: onTarget, value: true)
    }

    /// The most callbacks that ever waited at once (for tests and diagnostics).
    var peakBacklog: Int {
        condition.lock()
        defer { condition.unlock() }
        return backlog.peak
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        condition.lock()
        backlog.pending += 1
        backlog.peak = max(backlog.peak, backlog.pending)
        let isOver = backlog.pending > highWater
        condition.unlock()
        target.async { [self] in
            block()
            finished()
        }
        if isOver, DispatchQueue.getSpecific(key: onTarget) != true { waitForBacklogToHalve() }
    }

    private func finished() {
        condition.lock()
        backlog.pending -= 1
        if backlog.waiters > 0, backlog.pending <= highWater / 2 { condition.broadcast() }
        condition.unlock()
    }

    private func waitForBacklogToHalve() {
        let deadline = Date(timeIntervalSinceNow: longestWait)
        condition.lock()
        backlog.waiters += 1
        while backlog.pending > highWater / 2, condition.wait(until: deadline) {}
        backlog.waiters -= 1
        condition.unlock()
    }
}
