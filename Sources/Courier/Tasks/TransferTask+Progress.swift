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
        state.withLock { progressSnapshot(direction, $0) }
    }

    func progressSnapshot(_ direction: ProgressDirection, _ state: State) -> Progress {
        let completed = direction == .upload ? state.sent : state.received
        let total = direction == .upload ? state.expectedToSend : state.expectedToReceive
        let progress = Progress(parent: nil, userInfo: nil)
        if let total, total >= 0 {
            progress.totalUnitCount = total
            progress.completedUnitCount = min(completed, total)
        } else {
            progress.totalUnitCount = -1
            progress.completedUnitCount = completed
        }
        return progress
    }

    /// Adds an observer; `false` when the task has already completed.
    func addObserver(_ observer: ProgressObserver) -> Bool {
        state.withLock { state in
            guard state.phase.state != .completed else { return false }
            state.observers.append(observer)
            return true
        }
    }

    /// The observers to call and the snapshot to give them, when a throttled update is due.
    func dueProgress(_ direction: ProgressDirection, _ state: inout State) -> ([ProgressObserver], Progress)? {
        guard !state.observers.isEmpty else { return nil }
        let now = ContinuousClock.now
        if let last = state.lastProgressDelivery[direction], now - last < settings.progressInterval { return nil }
        let observers = state.observers.filter { $0.direction == direction }
        guard !observers.isEmpty else { return nil }
        state.lastProgressDelivery[direction] = now
        return (observers, progressSnapshot(direction, state))
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
