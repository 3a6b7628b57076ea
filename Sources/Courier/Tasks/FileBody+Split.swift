import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FileBody {
    /// A split download's crew while it works (Docs/SegmentedDownloads.md), kept in the file body
    /// under the transfer's one lock: the machine, and the two things its driver holds for it.
    struct SplitRun {
        /// The connections' decisions (Downloads/Segmented/SplitCrew.swift); the transfer's
        /// current URLSession task is its first connection.
        var crew: SplitCrew<URLSessionTask>
        /// The crew's own lane sessions, released when it ends or stops (Session/LaneSessions.swift).
        let lanes: LaneSessions.Lease
        /// Ticks the crew every ``SplitCrew/tickInterval`` (set once armed); cancelled when it ends or stops.
        var timer: (any DispatchSourceTimer)?
        /// Which crew of the transfer this is (a retry starts a new one): a late wake-up of an
        /// earlier crew's timer or disk wait is not this one's.
        let number: Int
    }
}
