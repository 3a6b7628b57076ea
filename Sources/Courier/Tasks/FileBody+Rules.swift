import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download's own rules: what its policy says about a body nothing can prove complete, the
/// length check, when an `.atResponse` destination is asked, and what resume data the bytes held
/// make (the facts a response head gives are ``BodyFacts``'s). Pure: values in, a decision out
/// (`FileBodyTests`). The rules that also move the transfer's position (a 206 appended, a 200 that
/// starts over, a short body continued) are TransferState+Downloads.swift's.
extension FileBody {

    /// How often in a row a download starts over because answers to `Range` did not continue
    /// its bytes, before it fails: a server that always answers so would loop forever.
    static let restartLimit = 3
    /// How many times the limit a download that cannot be continued with `Range` may hold
    /// before it fails: some slack for a burst, never unbounded.
    static let unpausableBacklogFactor: Int64 = 4
    /// How many continuations in a row that add no byte a download makes before it fails.
    static let stallLimit = 3

    static func statusError(
        _ response: HTTPURLResponse, body: Data, _ plan: DownloadPlan, request: URLRequest?
    )
        -> CourierError
    {
        do {
            try plan.validation.validate(request: request, response: response, data: body)
        } catch {
            return error
        }
        return CourierError(
            code: .unacceptableStatusCode, message: "the server answered HTTP \(response.statusCode)",
            url: request?.url, response: response, body: body)
    }

    // MARK: - Decisions of the body

    /// Applies the policy to a body that `unverifiable` says nothing can prove complete (`nil`:
    /// it can be proven): fine when the caller can check it (an expected SHA-256 or length),
    /// published but marked unverified when the policy allows it, refused otherwise, before any
    /// of it is fetched.
    mutating func verify(_ unverifiable: String?, url: URL?, response: HTTPURLResponse) -> CourierError? {
        unverified = false
        guard let why = unverifiable else { return nil }
        let policy = plan.policy
        if policy.expectedSHA256 != nil || policy.expectedLength != nil { return nil }
        if policy.publishesUnverifiedBodies {
            unverified = true
            return nil
        }
        return CourierError(
            code: .integrityFailed,
            message: why + "; nothing could prove it complete, so it was not downloaded (give an expected SHA-256 or "
                + "length, or set DownloadPolicy.publishesUnverifiedBodies)",
            url: url, response: response)
    }

    /// Why a body that ended with `received` bytes is not the one announced (`announced`, or the
    /// policy's expected length); `nil` when the length is right. The SHA-256 is the writer's,
    /// checked once every byte is in the file.
    func lengthProblem(received: Int64, announced: Int64?, url: URL?) -> CourierError? {
        if let announced, received != announced {
            return .integrity("\(received) bytes arrived, the server announced \(announced)", url)
        }
        if let expected = plan.policy.expectedLength, received != expected {
            return .integrity("\(received) bytes arrived, \(expected) were expected", url)
        }
        return nil
    }

    /// The `.atResponse` destination to ask where the file goes, and the partial file it is
    /// shown: once per download, once the partial file exists.
    var destinationToResolve: (DownloadDestination, URL)? {
        guard plan.destination.timing == .atResponse, resolvedDestination == nil, let partialFile else { return nil }
        return (plan.destination, partialFile)
    }

    /// Resume data for `received` bytes of `request`'s body, or `nil` when they cannot be
    /// continued: only a GET, with a strong `validator` (or a policy that resumes without one),
    /// with some bytes (or `allowEmpty`: a record written before any byte). Its `bytesOnDisk` is
    /// what has arrived; the writer replaces it with what the file really holds when it writes a
    /// record or ends the file, so neither ever claims a byte still waiting in memory.
    func resumeData(
        for request: URLRequest, received: Int64, validator: String?, totalLength: Int64?, sensitiveHeaders: Set<String>,
        allowEmpty: Bool
    ) -> ResumeData? {
        guard let url = request.url, let partial = partialFile ?? plan.partialFile ?? plan.resumeFrom?.partialFile else {
            return nil
        }
        let method = (request.httpMethod ?? "GET").uppercased()
        // A body a 416 proved complete is resumable too: its bytes are all there.
        let resumable =
            method == "GET"
            && (validator != nil || plan.policy.resumesWithoutValidator)
            && (received > 0 || allowEmpty)
        guard resumable else { return nil }
        let (headers, omitted) = ResumeData.storableHeaders(
            of: request, sensitive: sensitiveHeaders, recordingValues: plan.policy.recordsHeaders)
        var resume = ResumeData(
            url: ResumeData.withoutCredentials(url), method: method, headers: headers,
            partialFile: partial, bytesOnDisk: received, validator: validator, totalLength: totalLength)
        resume.omittedHeaders = omitted
        if let map = segments, map.validator == validator, map.length == totalLength {
            // A split download's record: the written prefix, and every segment's own bytes.
            resume.bytesOnDisk = map.contiguousPrefix
            resume.segments = map.withoutConnections.segments
        }
        return resume
    }
}
