import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download's body: its plan, the file operations decided for its partial file, and its own
/// bookkeeping.
///
/// Kept in `TransferTask`'s state for a download only (`nil` for other kinds) and changed under
/// the task's lock. The decisions never touch the disk or the writer: they queue
/// ``DiskWriter/Request``s in ``diskRequests`` (the directory, the file, its writes, records and
/// removals), which the driver hands to its writer, in order, as it leaves the lock (the writer
/// never takes the task's lock; Docs/Architecture.md, "Downloads"). Its rules are
/// FileBody+Rules.swift's; those that also move the transfer's position are
/// TransferState+Downloads.swift's.
struct FileBody {
    let plan: DownloadPlan
    /// File operations decided and not yet handed to the driver's writer, in order (emptied by
    /// `TransferTask.locked` before it unlocks).
    var diskRequests: [DiskWriter.Request] = []

    init(plan: DownloadPlan) {
        self.plan = plan
    }

    /// The partial file handed to the writer (it creates or opens it on its queue).
    var partialFile: URL?
    var attempts = 0
    var retries = 0
    var diskPauses = 0
    var resumedBytes: Int64 = 0
    var bytesFromNetwork: Int64 = 0
    /// The current attempt's final response when the validation refuses it, and the start of
    /// its body (the error page), which never goes into the partial file.
    var rejected: HTTPURLResponse?
    private(set) var rejectedBody = Data()
    var lastRecordWrite: ContinuousClock.Instant?
    var producesResumeData = false
    /// The current failure leaves the bytes held resumable (they were proven before it).
    var keepsBytes = false
    /// The most bytes held at any continuation so far: a continuation that adds none is a stall.
    private(set) var continuationMark: Int64 = 0
    /// Continuations in a row that added no byte.
    private(set) var stalls = 0
    /// The body was published under ``DownloadPolicy/publishesUnverifiedBodies``.
    var unverified = false
    /// The destination decided when the headers arrived (``DownloadDestination/Timing/atResponse``).
    var resolvedDestination: (url: URL, options: DownloadDestination.Options)?
    var resumeDataHandler: (@Sendable (ResumeData?) -> Void)?
    /// A split download's map (Downloads/Segmented): the one to continue (from a record, a pause
    /// or a crew that ended), or the crew's latest, taken after the writes it counts were queued.
    var segments: SegmentMap?
    /// A split download's crew while it works (FileBody+Split.swift); the current attempt's
    /// URLSession task is its first connection.
    var split: SplitRun?
    /// Crews started so far: each crew's number.
    var crews = 0
    /// The most connections used at once.
    var peakConnections = 1
    /// A segment's answer broke the rules and the download started over: it stays one stream.
    var splitRefused = false

    /// The most of an error page kept for the error's body.
    static let rejectedBodyLimit = 64 * 1024

    /// A final response arrived: whatever the last one refused is forgotten.
    mutating func responseArrived() {
        rejected = nil
        rejectedBody = Data()
    }

    /// A chunk of a refused response: its start, up to ``rejectedBodyLimit``, is kept for the error.
    mutating func keepRejected(_ chunk: Data) {
        let room = Self.rejectedBodyLimit - rejectedBody.count
        if room > 0 { rejectedBody.append(chunk.prefix(room)) }
    }

    /// A body ended short with `received` bytes held; returns how many continuations in a row
    /// have now added nothing. Progress is measured against the most ever held at a continuation,
    /// not the attempt's start: a server that answers each continuation with a new, equally short
    /// 200 adds nothing.
    mutating func endedShort(holding received: Int64) -> Int {
        stalls = received > continuationMark ? 0 : stalls + 1
        continuationMark = max(continuationMark, received)
        return stalls
    }

    /// The download's report; `continuations` is the timeline's count of requests of that kind,
    /// so the report and the timeline say one thing.
    func report(continuations: Int) -> DownloadReport {
        var report = DownloadReport()
        report.attempts = attempts
        report.retries = retries
        report.diskPauses = diskPauses
        report.resumedBytes = resumedBytes
        report.bytesReceived = bytesFromNetwork
        report.continuations = continuations
        report.isVerified = !unverified
        report.connections = peakConnections
        return report
    }
}
