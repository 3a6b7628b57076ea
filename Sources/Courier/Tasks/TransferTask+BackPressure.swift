import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Back-pressure: a download whose disk is slower than its network pauses itself.
///
/// URLSession on Linux cannot slow a transfer down: its `suspend()`/`resume()` sends the request
/// again from byte 0 (Docs/Platform.md §2.8), and a delegate that falls behind only makes it queue the
/// data in memory (§2.9). So when the writer's backlog passes ``DownloadPolicy/maximumBufferedBytes``,
/// Courier stops the attempt (its late callbacks are ignored, as for any stopped attempt) and,
/// once the backlog is down to half, asks for the rest with `Range`/`If-Range` — the machinery of
/// `suspend()`/`resume()`, without the lifecycle ever leaving `running` and without using a retry.
extension TransferTask {
    /// How many times the limit a download that cannot be continued with `Range` may hold
    /// before it fails: some slack for a burst, never unbounded.
    static let unpausableBacklogFactor: Int64 = 4

    /// Decides what a chunk that left `backlog` bytes waiting for the disk means for the attempt.
    func backPressure(_ backlog: Int64, _ plan: DownloadPlan, _ state: inout State) -> ChunkOutcome {
        let limit = plan.policy.bufferLimit
        guard backlog > limit else { return .accepted }
        // The whole body is in: nothing more will arrive, and a pause would only ask for nothing.
        if let total = state.expectedToReceive, state.received >= total { return .accepted }
        guard canContinueByRange(state) else {
            let (ceiling, overflow) = limit.multipliedReportingOverflow(by: Self.unpausableBacklogFactor)
            guard !overflow, backlog > ceiling else { return .accepted }
            return .stop(.diskTooSlow(limit: limit, url: originalRequest.url))
        }
        state.phase.attemptThrottled(.disk)
        state.file?.diskPauses += 1
        notePause(.disk, &state)
        state.file?.writer.whenBacklog(atMost: limit / 2) { [weak self] in self?.continueAfterBackPressure() }
        return .pause
    }

    /// The writer has caught up: the next attempt asks for the rest (unless the task was paused,
    /// cancelled or failed meanwhile).
    func continueAfterBackPressure() {
        continueAfterPause(.disk)
    }

    /// Ends a pause for the disk or for a stream's consumer: the next attempt asks for the rest,
    /// unless the task was paused, cancelled or failed meanwhile.
    func continueAfterPause(_ reason: TaskMetrics.Pause.Reason) {
        let request = state.withLock { state -> URLRequest? in
            guard state.phase.throttleEnded(reason) else { return nil }
            notePauseEnded(reason, &state)
            return restartRequest(&state)
        }
        if let request { startAttempt(request) }
    }
}

extension CourierError {
    /// A download that cannot pause itself held more than it may while the disk fell behind.
    static func diskTooSlow(limit: Int64, url: URL?) -> CourierError {
        CourierError(
            code: .fileSystem,
            message: "the disk could not keep up with the network: more than \(TransferTask.unpausableBacklogFactor) × "
                + "maximumBufferedBytes (\(limit) bytes) were waiting to be written, and this download cannot be paused "
                + "and continued with Range (no strong validator, not a GET, or a content-encoded body); raise "
                + "DownloadPolicy.maximumBufferedBytes or write to a faster disk",
            url: url)
    }
}
