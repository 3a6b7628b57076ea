import Foundation

/// Which way bytes move.
public enum ProgressDirection: Hashable, Sendable {
    /// The request body going to the server.
    case upload
    /// The response body coming back.
    case download
}

/// A registered progress handler (or an `AsyncStream`'s continuation).
struct ProgressObserver: Sendable {
    let direction: ProgressDirection
    let handler: @Sendable (Progress) -> Void
    let finish: (@Sendable () -> Void)?
}

extension TransferTask {
    /// A fresh `Progress` describing `direction` now. A new object every time: resetting a
    /// `Progress` total to 0 traps on Linux (Docs/Platform.md §6), and a snapshot can be read from any
    /// thread while the transfer goes on. Unknown totals stay unknown; never above 1.
    func progress(_ direction: ProgressDirection) -> Progress {
        locked { $0.progressSnapshot(direction) }
    }

    /// Adds an observer; `false` when the task has already completed.
    func addObserver(_ observer: ProgressObserver) -> Bool {
        locked { state in
            guard state.phase.state != .completed else { return false }
            state.observers.append(observer)
            return true
        }
    }

    func deliver(_ snapshot: Progress, to observers: [ProgressObserver]) {
        settings.delivery.withoutGroup.run {
            for observer in observers { observer.handler(snapshot) }
        }
    }
}

extension Delivery {
    /// Progress updates are not completions: they never enter the completion group.
    var withoutGroup: Delivery { Delivery(queue: queue, group: nil) }
}
