import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a download survives failures and proves its result.
public struct DownloadPolicy: Sendable {
    /// How many times a download continues by itself after a transient failure (a connection
    /// reset or closed early, a timeout, or a status in ``retryableStatusCodes``). Default 3.
    public var retryLimit: Int = 3
    /// The first retry's delay; each further retry doubles it, with jitter. Default 250 ms.
    public var initialRetryDelay: Duration = .milliseconds(250)
    /// The longest computed delay between attempts. Default 30 s.
    public var maximumRetryDelay: Duration = .seconds(30)
    /// The longest `Retry-After` a download waits for. Default 120 s.
    ///
    /// A retryable status whose `Retry-After` asks for more is not retried at all: the download
    /// fails at once with that status (``CourierError/Code-swift.struct/unacceptableStatusCode``),
    /// its message naming the delay the server asked for, and keeps its bytes for resuming.
    /// Waiting the capped time instead would retry sooner than the server said it can answer —
    /// `503` with `Retry-After: 86400` means "not today" — and spend every retry doing it.
    public var maximumRetryAfter: Duration = .seconds(120)
    /// Statuses that are retried: 408, 429, 500, 502, 503 and 504.
    public var retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
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
    /// Test-only: a slow or failing disk for the partial file's writer. Internal, set only by the
    /// library's tests through `@testable import` (Docs/PublicAPI.md, "Test hooks").
    var simulatedDisk: DiskWriter.Simulation?

    /// ``maximumBufferedBytes`` with its floor applied.
    var bufferLimit: Int64 { Int64(max(maximumBufferedBytes, 64 * 1024)) }

    /// The defaults.
    public init() {}

    /// The defaults: 3 retries, resume only with a validator, no integrity expectations.
    public static let `default` = DownloadPolicy()

    /// `.<name>.courier-partial` in the destination's directory.
    public static func defaultPartialFile(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).courier-partial")
    }

    /// The resume record kept beside `partialFile`: `….courier-resume`.
    public static func recordFile(for partialFile: URL) -> URL {
        let name = partialFile.lastPathComponent
        let base = name.hasSuffix(".courier-partial") ? String(name.dropLast(".courier-partial".count)) : name
        return partialFile.deletingLastPathComponent().appendingPathComponent(base + ".courier-resume")
    }

    /// The delay a response's `Retry-After` asks for (a number of seconds, or an HTTP date),
    /// uncapped; `nil` when it has none or it cannot be read. A download compares it with
    /// ``maximumRetryAfter``.
    public static func requestedRetryDelay(of response: HTTPURLResponse, now: Date = Date()) -> Duration? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After"),
            let seconds = Backoff.seconds(fromRetryAfter: value, now: now)
        else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The delay before retry number `attempt` (1, 2, …): `Retry-After` when the server sent one
    /// (seconds or an HTTP date, at most ``maximumRetryAfter``: a download does not retry after a
    /// longer one), otherwise exponential backoff
    /// from ``initialRetryDelay`` capped at ``maximumRetryDelay``, with "equal jitter" (half
    /// fixed, half random) so that many clients do not retry in lockstep.
    public func retryDelay(attempt: Int, retryAfter: String?, now: Date = Date()) -> Duration {
        Backoff(initial: initialRetryDelay, maximum: maximumRetryDelay, maximumRetryAfter: maximumRetryAfter)
            .delay(attempt: attempt, retryAfter: retryAfter, now: now)
    }

    /// Whether a transport error is worth continuing after: the connection broke, went quiet,
    /// closed without an answer, or could not be made. Not a failed DNS lookup or TLS handshake
    /// (``CourierError/Code-swift.struct/dnsFailed``, ``CourierError/Code-swift.struct/tlsFailed``),
    /// which would only fail the same way again.
    static func isTransient(_ error: CourierError) -> Bool {
        switch error.code {
        case .timedOut, .connectionLost, .noResponse, .connectionRefused:
            return true
        case .network:
            guard let underlying = error.underlyingError.map({ $0 as NSError }), underlying.domain == NSURLErrorDomain
            else { return false }
            switch underlying.code {
            // -1: a libcurl text not classified more precisely (Docs/Platform.md §2.12). The codes
            // that now have codes of their own stay, for `.network` errors made by hand.
            case -1, NSURLErrorNetworkConnectionLost, NSURLErrorCannotConnectToHost, NSURLErrorBadServerResponse,
                NSURLErrorTimedOut, NSURLErrorNotConnectedToInternet, NSURLErrorCannotParseResponse:
                return true
            default:
                return false
            }
        default:
            return false
        }
    }
}
