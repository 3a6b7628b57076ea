import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The refresh hook's rules and the partial file's name, shared by the one-process queue and a
/// shared store's worker (``DownloadQueueWorker``): one rule, one place.
extension DownloadQueue {
    /// What the refresher's answer does to a run.
    enum RefreshOutcome {
        /// Launch the download: with this request, or (`nil`) with the URL as it is.
        case launch(URLRequest?)
        /// The item fails with this.
        case fail(CourierError)
    }

    /// Whether a failed attempt asks the refresher, and why: a status in `statusCodes` (which
    /// suggests an expired URL) while a refresher is set and fewer than `maximum` refreshes in a
    /// row were asked. `nil`: the failure stands.
    static func refreshReason(
        after error: CourierError, hasRefresher: Bool, statusCodes: Set<Int>, refreshesSoFar: Int, maximum: Int
    ) -> RefreshReason? {
        guard hasRefresher, let status = error.response?.statusCode, statusCodes.contains(status), refreshesSoFar < maximum
        else { return nil }
        return .expired(status: status)
    }

    /// What the refresher's `outcome` for `reason` does: a request with a URL is launched; no
    /// request before an attempt launches the URL as it is; no request after an expiry, or a
    /// refresher that threw, fails the item (`url`: the item's, for the error).
    static func refreshOutcome(_ outcome: Result<URLRequest?, any Error>, reason: RefreshReason, url: URL?) -> RefreshOutcome {
        switch outcome {
        case .success(let request?) where request.url != nil:
            return .launch(request)
        case .success:
            if reason == .beforeAttempt { return .launch(nil) }
            return .fail(
                CourierError(
                    code: .unacceptableStatusCode,
                    message: "the URL seems to have expired (\(reason)) and the refresher gave no new request", url: url))
        case .failure(let error):
            return .fail(
                CourierError(code: .adaptationFailed, message: "the URL refresher failed: \(error)", url: url, underlyingError: error))
        }
    }

    /// The name of an item's partial file (a hash of the id, which may hold any character).
    static func partialFileName(for id: String) -> String {
        "\(SHA256.hexString(SHA256.hash(Data(id.utf8))).prefix(40)).courier-partial"
    }

    /// The resume record beside `partial` rewritten for `request`'s URL, when it was made for an
    /// earlier URL of the item (before a refresh) and can continue with this one: `If-Range`
    /// still proves it is the same version. `nil`: the download starts as its policy says.
    static func recordForRefreshedURL(beside partial: URL, request: URLRequest) -> ResumeData? {
        guard let url = request.url, var record = try? ResumeData.record(beside: partial),
            record.url != ResumeData.withoutCredentials(url)
        else { return nil }
        record.url = ResumeData.withoutCredentials(url)
        return SessionManager.problem(resuming: record, with: request) == nil ? record : nil
    }
}
