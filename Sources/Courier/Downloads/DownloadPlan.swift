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
