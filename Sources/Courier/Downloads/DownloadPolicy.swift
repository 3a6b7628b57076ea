import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a download survives failures and proves its result.
public struct DownloadPolicy: Sendable {
    /// When a download tries again by itself after a failed attempt, how often, and how long it
    /// waits: the one retry policy (``RetryPolicy``), asked before any retrier of the manager's
    /// interceptor, with the same decision as for data tasks. Each retry continues from the bytes
    /// on disk with `Range` when that is safe (the attempt decides, not the policy).
    ///
    /// Default: ``RetryPolicy`` with a ``RetryPolicy/retryLimit`` of 3 (not its own 2: a download's
    /// retries continue the file rather than fetch it again). A `Retry-After` longer than
    /// ``RetryPolicy/maximumRetryAfter`` ends the retries at once: the download fails with that
    /// status, its message naming the delay the server asked for, and keeps its bytes for resuming.
    public var retry: RetryPolicy = DownloadPolicy.defaultRetry
    /// The expected length of the file; a different length is ``CourierError/Code-swift.struct/integrityFailed``.
    public var expectedLength: Int64?
    /// The expected SHA-256 of the file, checked while streaming; a mismatch is
    /// ``CourierError/Code-swift.struct/integrityFailed`` and nothing is published.
    public var expectedSHA256: [UInt8]?
    /// Continue a partial file even when the server gave no strong validator (no strong ETag and
    /// no `Last-Modified`). Off by default: without a validator nothing proves the bytes on disk
    /// and the server's are the same version, so Courier starts over.
    public var resumesWithoutValidator = false
    /// Where the partial file lives. With a fixed location Courier keeps a resume record beside
    /// it (``recordFile(for:)``), so a download survives the process being killed: the next
    /// download to the same place continues. `nil` means: next to a fixed destination
    /// (``defaultPartialFile(for:)``), or a private temporary file for a destination closure.
    public var partialFile: URL?
    /// Publish a body that nothing can prove complete, marked ``DownloadReport/isVerified`` `false`.
    /// Off by default. Courier asks for `Accept-Encoding: identity`; a server that sends a
    /// content-encoded body anyway leaves no length to check (libcurl decodes it, and a stream cut
    /// inside the compressed data ends without an error), and a body that only the connection
    /// closing ends (no `Content-Length`, not chunked) may be cut anywhere. Such a download fails
    /// with ``CourierError/Code-swift.struct/integrityFailed`` as soon as its headers arrive —
    /// nothing fetched is lost — unless ``expectedSHA256`` or ``expectedLength`` can check it, or
    /// this is on.
    public var publishesUnverifiedBodies = false
    /// The most time the whole download may take, from its first `resume()` to its end — every
    /// attempt, retry, pause and delay included; `nil` (the default) for the manager's
    /// ``SessionManager/Configuration/deadline``. URLSession on Linux ignores
    /// `timeoutIntervalForResource`, and its request timeout only limits silence, so a server that
    /// trickles a byte a second would otherwise hold a download forever. Expiry fails the download
    /// with ``CourierError/Code-swift.struct/deadlineExceeded``, keeping its bytes for resuming.
    public var deadline: Duration?
    /// Header names (any case) treated as secrets for this download, besides `Authorization`,
    /// `Proxy-Authorization`, `Cookie` and the manager's ``SessionManager/Configuration/sensitiveHeaders``:
    /// stripped on cross-origin redirects and never written into resume data (only their names,
    /// in ``ResumeData/omittedHeaders``).
    public var sensitiveHeaders: Set<String> = []
    /// Whether resume data keeps the request's non-secret header values, so
    /// ``SessionManager/downloadTask(resumingFrom:request:to:policy:validation:queue:progress:completion:)``
    /// can rebuild the request without one. Default `true`; turn it off when every run supplies
    /// its own request (as `courier get` does with its `-H` headers): then no value is written,
    /// only the names.
    public var recordsHeaders = true
    /// How often the resume record is brought up to date while bytes arrive. Default 1 s.
    public var recordInterval: Duration = .seconds(1)
    /// The most bytes of a download kept in memory waiting for the disk. Default 32 MiB; values
    /// below 64 KiB count as 64 KiB.
    ///
    /// Chunks are written to the partial file behind the network. When the disk falls this far
    /// behind, Courier pauses the transfer itself — it stops the request and, once half of the
    /// backlog is written, asks for the rest with `Range` and `If-Range` — because URLSession has
    /// no way to slow a transfer down and would otherwise keep every chunk in memory. The task
    /// stays running meanwhile, and no retry is used up. A download that cannot be continued with
    /// `Range` (no strong validator and ``resumesWithoutValidator`` off, not a GET, or an encoded
    /// body) keeps accepting up to four times this limit and then fails with
    /// ``CourierError/Code-swift.struct/fileSystem``; raise the limit for such downloads to a slow disk.
    ///
    /// Default 32 MiB: enough to ride out the writer being descheduled for ~60 ms on a link
    /// delivering 500 MB/s. With 8 MiB, 2 of 25 downloads of 256 MiB over loopback to a fast disk
    /// paused (and re-fetched what was in flight) in a release build on a busy 2-core machine.
    public var maximumBufferedBytes: Int = 32 * 1024 * 1024
    /// How many connections the download may use (Docs/SegmentedDownloads.md). Default
    /// ``DownloadSplit/off``: one. A split applies only to a GET whose server proves, in its first
    /// answer, that it serves byte ranges of one version; otherwise the download is one stream.
    public var split: DownloadSplit = .off
    /// Whether the download answers from, and stores into, the manager's
    /// ``SessionManager/Configuration/responseCache``, and up to which size. Default
    /// ``DownloadCaching/off``; never for a split download (``DownloadCaching`` has the rules).
    public var responseCache: DownloadCaching = .off
    /// Test-only: a slow or failing disk for the partial file's writer. Internal, set only by the
    /// library's tests through `@testable import` (Docs/PublicAPI.md, "Test hooks").
    var simulatedDisk: DiskWriter.Simulation?

    /// ``maximumBufferedBytes`` with its floor applied.
    var bufferLimit: Int64 { Int64(max(maximumBufferedBytes, 64 * 1024)) }

    /// The defaults.
    public init() {}

    /// The defaults: 3 retries (``retry``), resume only with a validator, no integrity expectations.
    public static let `default` = DownloadPolicy()

    /// `.<name>.courier-partial` in the destination's directory.
    public static func defaultPartialFile(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).courier-partial")
    }

    /// A fixed partial file in `directory` for a download of `url` whose file name is known only
    /// from its response (an `.atResponse` destination, named after `Content-Disposition`):
    /// `.courier-<16 hex digits of SHA-256(url)>.courier-partial`. The same for every download of
    /// the same URL and different for different URLs, so a process started again after a crash
    /// finds the bytes and the record of the one that stopped before any response names the file.
    public static func partialFile(for url: URL, in directory: URL) -> URL {
        let digest = SHA256.hexString(SHA256.hash(Data(url.absoluteString.utf8)))
        return directory.appendingPathComponent(".courier-\(digest.prefix(16)).courier-partial")
    }

    /// The resume record kept beside `partialFile`: `….courier-resume`.
    public static func recordFile(for partialFile: URL) -> URL {
        let name = partialFile.lastPathComponent
        let base = name.hasSuffix(".courier-partial") ? String(name.dropLast(".courier-partial".count)) : name
        return partialFile.deletingLastPathComponent().appendingPathComponent(base + ".courier-resume")
    }

    /// ``retry`` as a download starts with it: ``RetryPolicy``'s defaults with 3 retries.
    static let defaultRetry: RetryPolicy = {
        var retry = RetryPolicy()
        retry.retryLimit = 3
        return retry
    }()
}

// Deprecated spellings of the retry fields, which now live in ``DownloadPolicy/retry``.
extension DownloadPolicy {
    /// How many times a download retries by itself.
    @available(*, deprecated, renamed: "retry.retryLimit")
    public var retryLimit: Int {
        get { retry.retryLimit }
        set { retry.retryLimit = newValue }
    }
    /// The first retry's delay.
    @available(*, deprecated, renamed: "retry.initialDelay")
    public var initialRetryDelay: Duration {
        get { retry.initialDelay }
        set { retry.initialDelay = newValue }
    }
    /// The longest computed delay between attempts.
    @available(*, deprecated, renamed: "retry.maximumDelay")
    public var maximumRetryDelay: Duration {
        get { retry.maximumDelay }
        set { retry.maximumDelay = newValue }
    }
    /// The longest `Retry-After` a download waits for.
    @available(*, deprecated, renamed: "retry.maximumRetryAfter")
    public var maximumRetryAfter: Duration {
        get { retry.maximumRetryAfter }
        set { retry.maximumRetryAfter = newValue }
    }
    /// Statuses that are retried.
    @available(*, deprecated, renamed: "retry.retryableStatusCodes")
    public var retryableStatusCodes: Set<Int> {
        get { retry.retryableStatusCodes }
        set { retry.retryableStatusCodes = newValue }
    }
    /// The delay before retry number `attempt` (1, 2, …).
    @available(*, deprecated, renamed: "retry.retryDelay(attempt:retryAfter:now:)")
    public func retryDelay(attempt: Int, retryAfter: String?, now: Date = Date()) -> Duration {
        retry.retryDelay(attempt: attempt, retryAfter: retryAfter, now: now)
    }
    /// The delay a response's `Retry-After` asks for, uncapped.
    @available(*, deprecated, renamed: "RetryPolicy.requestedRetryDelay(of:now:)")
    public static func requestedRetryDelay(of response: HTTPURLResponse, now: Date = Date()) -> Duration? {
        RetryPolicy.requestedRetryDelay(of: response, now: now)
    }
}
