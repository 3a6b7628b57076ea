import Foundation

/// The worker's decisions, pure: no store, no disk, no clock (time comes in as an argument), so
/// each rule is a table tested on its own (DownloadQueueWorkerRuleTests).
extension DownloadQueueWorker {
    /// How often running leases are renewed: a third of the lease, so two renewals can fail (a
    /// store restarting, a slow network) before the lease runs out. Never under 50 ms.
    static func heartbeatInterval(leaseDuration: TimeInterval) -> TimeInterval {
        max(0.05, leaseDuration / 3)
    }

    /// What a new lease starts with.
    enum LeaseStart: Equatable {
        /// Nothing (or a directory) at the destination: fetch the item.
        case download
        /// The item's file is already in place (an earlier lease published it and died before
        /// completing): complete the item with it, without fetching or publishing again.
        case complete
        /// Something else is at the destination: fail the item with this reason; never replace it.
        case fail(String)
    }

    /// Decides what a lease starts with from what is at the item's destination.
    ///
    /// - `verdict`: what the destination proves against the item (`nil` when nothing is there).
    /// - `markedPublishing`: an earlier lease of the item marked this very destination as being
    ///   published (``DownloadQueueStore/beginPublishing(_:file:)``) and did not complete.
    ///
    /// A file with the item's SHA-256 is the item's, whoever put it there. A file without a
    /// SHA-256 to prove it is the item's only when a lease marked it as being published: the
    /// link is the step after the mark, so the file is that lease's download.
    static func start(destination verdict: DownloadQueue.ExistingFile.Verdict?, markedPublishing: Bool) -> LeaseStart {
        switch verdict {
        case nil: return .download
        case .proven?: return .complete
        case .unproven?:
            return markedPublishing
                ? .complete
                : .fail("a file is already at the destination and nothing proves it is this item's (no SHA-256 was given)")
        case .wrong(let problem)?:
            return .fail("the file already at the destination \(problem)")
        }
    }

    /// What ends a download's lease.
    enum LeaseEnd: Equatable {
        /// Published: mark the item completed (under the lease).
        case complete(URL)
        /// The lease was lost (refused at publishing, or by a renewal): nothing to tell the store,
        /// which already gave the item to another lease.
        case lost
        /// The worker is stopping and kept the bytes, or the store could not be reached to mark
        /// the publishing: give the item back (if that fails too, the lease runs out).
        case release
        /// The download failed for good: mark the item failed with this.
        case fail(DownloadQueue.Failure)
    }

    /// Decides how a finished download ends its lease.
    ///
    /// - `lost`: a renewal found the lease taken over and stopped the download.
    /// - `stopping`: the worker is shutting down and stopped it keeping its bytes.
    static func end(_ result: Result<URL, CourierError>, lost: Bool, stopping: Bool) -> LeaseEnd {
        if lost { return .lost }
        switch result {
        case .success(let file): return .complete(file)
        case .failure(let error) where error.code == .leaseLost: return .lost
        // The store could not be reached to mark the publishing (a database restarting): the
        // download is fine, the item is not the worker's to fail. It goes back to the list.
        case .failure(let error) where error.code == .storeUnavailable: return .release
        case .failure where stopping: return .release
        case .failure(let error): return .fail(DownloadQueue.Failure(error))
        }
    }

    /// Whether a store error on a renewal ends the download now: only a lost lease does. Any other
    /// failure (the store unreachable, restarting) leaves it running, renewed again at the next
    /// beat; if the lease runs out meanwhile, publishing is refused by the fence.
    static func renewalStopsDownload(_ error: CourierError) -> Bool {
        error.code == .leaseLost
    }
}
