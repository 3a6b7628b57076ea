import Dispatch

/// A resolved callback target: a queue (or inline) plus the optional completion group.
struct Delivery: Sendable {
    let queue: DispatchQueue?
    let group: DispatchGroup?

    func run(_ work: @escaping @Sendable () -> Void) {
        if let queue {
            queue.async(group: group, execute: work)
        } else {
            group?.enter()
            work()
            group?.leave()
        }
    }
}
