import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a download task decides before it starts, resolved by the manager.
struct DownloadPlan: Sendable {
    let destination: DownloadDestination
    let policy: DownloadPolicy
    /// Only a response this validation accepts has its body written to the partial file; any
    /// other is kept (bounded) as the error's body, and the partial file is left untouched.
    let validation: Validation
    /// The fixed partial file (with a resume record beside it), or `nil` for a private staging file.
    let partialFile: URL?
    /// Where to continue from: resume data given by the caller, or a record found on disk.
    let resumeFrom: ResumeData?

    var recordFile: URL? { partialFile.map(DownloadPolicy.recordFile(for:)) }

    /// Whether `status` puts the body into the file.
    func accepts(_ status: Int) -> Bool {
        validation.acceptableStatusCodes?.contains(status) ?? true
    }
}

/// Download-only bookkeeping inside a transfer's state.
struct DownloadState {
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
    var rejectedBody = Data()
    var lastRecordWrite: ContinuousClock.Instant?
    var producesResumeData = false
    /// The current failure leaves the bytes held resumable (they were proven before it).
    var keepsBytes = false
    /// The most bytes held at any continuation so far: a continuation that adds none is a stall.
    var continuationMark: Int64 = 0
    /// Continuations in a row that added no byte.
    var stalls = 0
    /// Starts from zero in a row because an answer to `Range` did not continue the bytes held.
    var restarts = 0
    var continuations = 0
    /// The body was published under ``DownloadPolicy/publishesUnverifiedBodies``.
    var unverified = false
    /// The destination decided when the headers arrived (``DownloadDestination/Timing/atResponse``).
    var resolvedDestination: (url: URL, options: DownloadDestination.Options)?
    var resumeDataHandler: (@Sendable (ResumeData?) -> Void)?

    var report: DownloadReport {
        var report = DownloadReport()
        report.attempts = attempts
        report.retries = retries
        report.diskPauses = diskPauses
        report.resumedBytes = resumedBytes
        report.bytesReceived = bytesFromNetwork
        report.continuations = continuations
        report.isVerified = !unverified
        return report
    }
}
