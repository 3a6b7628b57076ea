import Foundation

/// The `OperationQueue` URLSession delivers delegate callbacks on: each callback goes straight
/// onto one serial `DispatchQueue`, in order, without building an `Operation` for it.
///
/// FoundationNetworking wraps every callback in a `BlockOperation` (allocation, two locks, a
/// `DispatchWorkItem` capturing the caller's context, a scheduling pass) on its own internal
/// work queue, which at several requests in flight is the busiest thread in the process. Three
/// callbacks per small request made that about 37,000 instructions per request (callgrind);
/// a plain `async` onto a serial queue keeps the one guarantee URLSession needs: callbacks run
/// one at a time, in the order they were added.
///
/// Operations added as `Operation` objects (URLSession does not, but the type allows it) still
/// run through `OperationQueue` on the same serial queue, so nothing ever runs concurrently.
final class DelegateQueue: OperationQueue, @unchecked Sendable {  // immutable after init; OperationQueue locks itself
    /// Where the callbacks run.
    let target: DispatchQueue

    init(target: DispatchQueue, name: String) {
        self.target = target
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
        underlyingQueue = target
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        target.async(execute: block)
    }
}
