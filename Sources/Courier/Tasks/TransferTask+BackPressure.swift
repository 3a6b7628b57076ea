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
    /// The writer has caught up: the next attempt asks for the rest (unless the task was paused,
    /// cancelled or failed meanwhile).
    func continueAfterBackPressure() {
        continueAfterPause(.disk)
    }

    /// Ends a pause for the disk or for a stream's consumer: the next attempt asks for the rest,
    /// unless the task was paused, cancelled or failed meanwhile.
    func continueAfterPause(_ reason: TaskMetrics.Pause.Reason) {
        let request = locked { state -> URLRequest? in
            guard state.phase.throttleEnded(reason) else { return nil }
            state.notePauseEnded(reason)
            return state.restartRequest()
        }
        if let request { startAttempt(request) }
    }
}

extension CourierError {
    /// A download that cannot pause itself held more than it may while the disk fell behind.
    static func diskTooSlow(limit: Int64, url: URL?) -> CourierError {
        CourierError(
            code: .fileSystem,
            message: "the disk could not keep up with the network: more than \(FileBody.unpausableBacklogFactor) × "
                + "maximumBufferedBytes (\(limit) bytes) were waiting to be written, and this download cannot be paused "
                + "and continued with Range (no strong validator, not a GET, or a content-encoded body); raise "
                + "DownloadPolicy.maximumBufferedBytes or write to a faster disk",
            url: url)
    }
}
