import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a data or upload task ended with.
public struct DataResponse<Value: Sendable>: Sendable {
    /// The request as last sent.
    public let request: URLRequest?
    /// The final HTTP response, if one arrived.
    public let response: HTTPURLResponse?
    /// The body received (also on failure, when there was one).
    public let data: Data?
    /// The serialized value, or why there is none.
    public let result: Result<Value, CourierError>
    /// The task's timeline: attempts, redirects, retries, pauses (Docs/Observability.md).
    public let metrics: TaskMetrics?

    /// Creates a response; Courier makes these for you.
    public init(
        request: URLRequest?, response: HTTPURLResponse?, data: Data?, result: Result<Value, CourierError>,
        metrics: TaskMetrics? = nil
    ) {
        self.request = request
        self.response = response
        self.data = data
        self.result = result
        self.metrics = metrics
    }

    /// The value, if serialization succeeded.
    public var value: Value? { try? result.get() }
    /// Where the answer came from when the manager has a ``ResponseCache``; `nil` otherwise.
    public var cacheOutcome: ResponseCache.Outcome? { metrics?.cacheOutcome }
    /// The error, if the task failed.
    public var error: CourierError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

/// What a download task ended with.
public struct DownloadResponse: Sendable {
    /// The request as last sent.
    public let request: URLRequest?
    /// The final HTTP response, if one arrived.
    public let response: HTTPURLResponse?
    /// Where the file was published, or why it was not.
    public let result: Result<URL, CourierError>
    /// How the download went: attempts, retries, bytes carried.
    public let report: DownloadReport
    /// The task's timeline: attempts, redirects, retries, pauses (Docs/Observability.md).
    public let metrics: TaskMetrics?

    /// Creates a response; Courier makes these for you.
    public init(
        request: URLRequest?, response: HTTPURLResponse?, result: Result<URL, CourierError>,
        report: DownloadReport = DownloadReport(), metrics: TaskMetrics? = nil
    ) {
        self.request = request
        self.response = response
        self.result = result
        self.report = report
        self.metrics = metrics
    }

    /// The published file, on success.
    public var fileURL: URL? { try? result.get() }
    /// Where the body came from when the download opted in to the manager's ``ResponseCache``
    /// (``DownloadPolicy/responseCache``); `nil` otherwise.
    public var cacheOutcome: ResponseCache.Outcome? { metrics?.cacheOutcome }
    /// The error, if the download failed.
    public var error: CourierError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

/// How a download went.
public struct DownloadReport: Sendable, Equatable {
    /// Requests made (1 when nothing went wrong; each retry and each pause for the disk adds one).
    public var attempts: Int = 0
    /// Automatic retries after transient failures.
    public var retries: Int = 0
    /// Times the download paused because the disk fell behind the network and continued with
    /// `Range` (see ``DownloadPolicy/maximumBufferedBytes``); these are not retries.
    public var diskPauses: Int = 0
    /// Bytes already on disk when the download started (continued from resume data or a record).
    public var resumedBytes: Int64 = 0
    /// Body bytes received over the network, across all attempts.
    public var bytesReceived: Int64 = 0
    /// Requests that asked for the rest of the body with `Range`, not retries: after the server
    /// ended a body short of the length it announced (a partial 206 is legal, RFC 9110 §14.2), a
    /// pause for the disk or a slow consumer, `suspend()`/`resume()`, or a wait for the network.
    /// The same requests the timeline labels `continuation` (``TaskMetrics/Attempt/Kind/continuation``).
    public var continuations: Int = 0
    /// Whether the file is proven complete: its length equals the total a response announced
    /// (`Content-Length`, or a 206's complete length), its chunked framing ended it, or it matched
    /// the caller's expected length or SHA-256. `false` only for a body published under
    /// ``DownloadPolicy/publishesUnverifiedBodies`` (content-encoded, or delimited by the
    /// connection closing), which nothing could check.
    public var isVerified: Bool = true
    /// The most connections the download used at once (``DownloadPolicy/split``); 1 for one stream.
    public var connections: Int = 1

    /// An empty report.
    public init() {}
}
