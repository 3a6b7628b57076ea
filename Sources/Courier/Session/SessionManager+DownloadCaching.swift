import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A file download and the response cache (``DownloadCaching``): a stored answer becomes a
/// staging file that is published like a network body, and a complete body within the
/// download's bound is stored. Both run in the download's finisher, before publishing, on the
/// processing queue (off every lock).
extension SessionManager {
    /// The cache binding a download with `plan` uses, or `nil`: no cache on the manager, not
    /// opted in, or a split download (its ranges are not one answer).
    func downloadCacheBinding(for plan: DownloadPlan) -> CacheBinding? {
        guard plan.policy.responseCache.maximumBytes != nil, !plan.policy.split.isSplit,
            var binding = cacheBinding()
        else { return nil }
        binding.forDownload = true
        return binding
    }

    /// `outcome` once the cache had its say: a stored answer (fresh, or revalidated by a `304`)
    /// staged in a file (checked against the policy's expected length and SHA-256 first), or a
    /// fresh complete body stored.
    static func cacheSettled(
        _ outcome: TransferOutcome, cache: CacheBinding, plan: DownloadPlan, temporaryDirectory: URL
    ) -> TransferOutcome {
        var outcome = outcome
        if outcome.cache == nil, outcome.metrics.cacheOutcome != nil, outcome.error == nil, outcome.stagedFile == nil {
            // Answered by the cache: nothing was written, the body is in memory.
            return stagingCachedBody(outcome, plan: plan, temporaryDirectory: temporaryDirectory)
        }
        guard outcome.cache != nil else { return outcome }
        if outcome.cache?.validating != nil, let error = outcome.error, error.code == .unacceptableStatusCode,
            error.resumeData == nil, let response = error.response, response.statusCode == 304
        {
            // A 304 to the stored entry's validators, which the transfer refused as a status and
            // wrote nothing for: the cache merges it and answers with the stored body, staged here.
            var revalidated = outcome
            revalidated.error = nil
            revalidated.response = response
            revalidated = cache.settle(revalidated)
            revalidated.cache = nil
            guard revalidated.metrics.cacheOutcome == .revalidated else {
                // Not usable (the transfer already asked again when it named another
                // representation): the refusal stands.
                var refused = outcome
                refused.metrics.cacheOutcome = .miss
                refused.cache = nil
                return refused
            }
            if let staged = revalidated.stagedFile { unlink(staged.path) }
            revalidated.stagedFile = nil
            revalidated.stagedHandle = nil
            return stagingCachedBody(revalidated, plan: plan, temporaryDirectory: temporaryDirectory)
        }
        let limit = plan.policy.responseCache.maximumBytes ?? 0
        // Only a whole 200 from byte 0 is one answer: a 206 continued the file (several
        // answers), a 416 proved bytes an earlier run wrote.
        guard outcome.error == nil, !outcome.alreadyComplete, outcome.response?.statusCode == 200, let staged = outcome.stagedFile,
            let size = (try? FileManager.default.attributesOfItem(atPath: staged.path)[.size]) as? NSNumber, size.intValue <= limit,
            let body = try? Data(contentsOf: staged), body.count <= limit
        else {
            // A body over its bound is never stored (nor read back); a failure has no fallback.
            outcome.metrics.cacheOutcome = .miss
            outcome.cache = nil
            return outcome
        }
        outcome.data = body
        outcome = cache.settle(outcome)
        outcome.data = Data()
        return outcome
    }

    /// `outcome` with its stored body (`data`) staged, or failed with why it could not be.
    private static func stagingCachedBody(_ outcome: TransferOutcome, plan: DownloadPlan, temporaryDirectory: URL) -> TransferOutcome {
        var outcome = outcome
        do {
            try stageCachedBody(&outcome, plan: plan, temporaryDirectory: temporaryDirectory)
        } catch let error as CourierError {
            outcome.error = error.adding(url: outcome.request.url, response: outcome.response, body: nil)
        } catch {
            outcome.error = CourierError(code: .fileSystem, message: "\(error)", url: outcome.request.url)
        }
        outcome.data = Data()
        return outcome
    }

    /// Writes the stored body `outcome.data` into a new staging file, as the writer would have.
    private static func stageCachedBody(_ outcome: inout TransferOutcome, plan: DownloadPlan, temporaryDirectory: URL) throws {
        let body = outcome.data
        let url = outcome.request.url
        if let expected = plan.policy.expectedLength, Int64(body.count) != expected {
            throw CourierError.integrity("the stored answer holds \(body.count) bytes, \(expected) were expected", url)
        }
        if let expected = plan.policy.expectedSHA256, SHA256.hash(body) != expected {
            throw CourierError.integrity(
                "the stored answer's SHA-256 is \(SHA256.hexString(SHA256.hash(body))), \(SHA256.hexString(expected)) was expected", url)
        }
        let directory = plan.destination.stagingDirectory ?? temporaryDirectory
        if plan.destination.stagingDirectory == nil {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let file = try StagingFile(in: directory)
        do {
            try file.append(body)
            outcome.stagedHandle = try file.handOver()
            outcome.stagedFile = file.url
        } catch {
            try? file.close()
            unlink(file.url.path)
            throw error
        }
    }
}
