import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a task's time went: one timeline per task, with one entry per attempt.
///
/// URLSession on Linux never delivers `URLSessionTaskMetrics` (`didFinishCollecting` is never
/// called, Docs/Platform.md §2.6), so Courier keeps its own from the delegate callbacks it owns.
/// Every instant is an offset from ``createdAt`` read from a monotonic clock, so a wall-clock
/// step in the middle of a request cannot make a phase negative. What the platform does not tell
/// (DNS, connect, TLS, connection reuse, protocol, remote address) is `nil`: never guessed.
///
/// Read it on ``DataResponse/metrics``, ``DownloadResponse/metrics``,
/// ``TaskCompletionEvent/metrics``, or at any time from ``CourierTask/metrics``. Its
/// `description` is a timeline for people (what `courier get -v` prints).
public struct TaskMetrics: Sendable, Equatable, Codable {
    /// The wall-clock time the task was created (only this instant is wall-clock).
    public var createdAt: Date
    /// Since creation: the first `resume()`.
    public var resumedAt: Duration?
    /// Since creation: the completion; `nil` while the task runs.
    public var completedAt: Duration?
    /// Every request made, in order: the first, redirect hops, authentication follow-ups,
    /// retries, and continuations with `Range`.
    public var attempts: [Attempt] = []
    /// The retries decided (by a download's policy or a retrier), in order.
    public var retries: [Retry] = []
    /// Pauses: `suspend()`, and back-pressure pauses for a slow disk or stream consumer.
    public var pauses: [Pause] = []
    /// Redirects followed or refused, in order.
    public var redirects: [Redirect] = []
    /// A split download's requests (``DownloadPolicy/split``), one per range a connection asked
    /// for, in the order they started; `nil` for a download that was not split (and in timelines
    /// encoded before splits existed).
    public var segmentRequests: [SegmentRequest]?
    /// Where the answer came from when the manager has a ``ResponseCache`` (hit, revalidated,
    /// miss, stale); `nil` when no cache was asked (none configured, a stream, a download).
    public var cacheOutcome: ResponseCache.Outcome?

    /// One request of a split download's connection: the range it asked for, when, and how it ended.
    public struct SegmentRequest: Sendable, Equatable, Codable {
        /// How a segment request ended.
        public enum Ending: String, Sendable, Codable, CaseIterable {
            /// Its range was written (or taken over by a faster connection's steal).
            case completed
            /// It failed; another connection continued its range.
            case failed
            /// The scheduler stopped it (fewer connections wanted, an end-game race lost), or the
            /// download stopped.
            case stopped
        }

        /// The connection's number within the download (1 is the first request's).
        public var connection: Int
        /// The bytes asked for (start inclusive, end exclusive).
        public var range: Range<Int64>
        /// Since creation: when it was started.
        public var start: Duration
        /// Since creation: when it ended; `nil` if the download ended first.
        public var end: Duration?
        /// The status of its answer, once it came.
        public var statusCode: Int?
        /// Bytes of its answer written into the file.
        public var bytesWritten: Int64 = 0
        /// How it ended.
        public var ending: Ending?

        /// A record; Courier makes these for you.
        public init(connection: Int, range: Range<Int64>, start: Duration) {
            self.connection = connection
            self.range = range
            self.start = start
        }
    }

    /// Creates an empty timeline; Courier makes these for you.
    public init(createdAt: Date) {
        self.createdAt = createdAt
    }

    /// Time the task's attempts waited behind ``SessionManager/Configuration/maximumRunningTasksPerHost``.
    public var queuedBehindHostCap: Duration {
        attempts.reduce(.zero) { $0 + ($1.queuedBehindHostCap ?? .zero) }
    }
    /// Body bytes sent, counted by Courier, across every attempt.
    public var bytesSent: Int64 { attempts.reduce(0) { $0 + $1.bytesSent } }
    /// Body bytes received over the network, counted by Courier, across every attempt (a
    /// continuation's bytes once, an attempt whose bytes were dropped too).
    public var bytesReceived: Int64 { attempts.reduce(0) { $0 + $1.bytesReceived } }
    /// How many retries were made.
    public var retryCount: Int { retries.count }
    /// Where each attempt that continued the body with `Range` started.
    public var resumeOffsets: [Int64] { attempts.compactMap(\.continuesFrom) }
    /// The URLs the task went through: the first request's, then each redirect followed.
    public var redirectChain: [URL] {
        guard let first = attempts.first?.url else { return [] }
        var chain = [first]
        for redirect in redirects where redirect.followed {
            if let to = redirect.to, chain.last != to { chain.append(to) }
        }
        return chain
    }

    /// One request on the wire, from Courier's side of the delegate callbacks.
    public struct Attempt: Sendable, Equatable, Codable {
        /// Why a request was made.
        public enum Kind: String, Sendable, Codable, CaseIterable {
            /// The task's first request.
            case initial
            /// A redirect hop (followed by URLSession, or re-sent by Courier with its body).
            case redirect
            /// The request again with a credential, after a 401 challenge.
            case authentication
            /// A retry after a failed attempt.
            case retry
            /// The rest of a body with `Range`: after a body ended short, a back-pressure pause,
            /// or `suspend()`/`resume()`.
            case continuation
            /// The body fetched again from byte 0: after `suspend()`/`resume()` with nothing to
            /// continue, or because the server's answer did not continue the body held.
            case restart
        }

        /// How an attempt ended.
        public enum Ending: String, Sendable, Codable, CaseIterable {
            /// The body was received and the task completed with it.
            case completed
            /// The attempt failed (see ``Attempt/error``); a retry may follow.
            case failed
            /// The task was cancelled.
            case cancelled
            /// A redirect response: the next attempt is the hop.
            case redirected
            /// A 401 answered with a credential: the next attempt carries it.
            case challenged
            /// `suspend()` stopped it.
            case suspended
            /// Stopped because the disk or the stream's consumer fell behind; continued by `Range`.
            case backPressure
            /// The body ended before the length the server announced; continued by `Range`.
            case endedShort
            /// The answer did not continue the body held; the body is fetched again.
            case restarted
        }

        /// 0 for the first request, then 1, 2, …
        public var number: Int
        /// Why it was made.
        public var kind: Kind
        /// The request's method.
        public var method: String
        /// The request's URL.
        public var url: URL?
        /// The byte the request asked to continue from with `Range`, if it did.
        public var continuesFrom: Int64?
        /// Since the task's creation: when Courier made the request.
        public var start: Duration
        /// How long it waited behind the per-host cap before URLSession started it (`nil`: it did not wait).
        public var queuedBehindHostCap: Duration?
        /// Since creation: the last request-body bytes handed to the network (`nil`: no body).
        public var requestBodySent: Duration?
        /// Since creation: the final response head (1xx excluded).
        public var responseHeaders: Duration?
        /// Since creation: the first body byte.
        public var firstBodyByte: Duration?
        /// Since creation: the last body byte.
        public var lastBodyByte: Duration?
        /// Since creation: when the attempt ended; `nil` while it runs.
        public var end: Duration?
        /// The final response's status code.
        public var statusCode: Int?
        /// Request-body bytes sent, counted by Courier.
        public var bytesSent: Int64 = 0
        /// Body bytes received, counted by Courier (as delivered: decoded, for an encoded body).
        public var bytesReceived: Int64 = 0
        /// How it ended; `nil` while it runs.
        public var ending: Ending?
        /// The error that ended it, when ``ending`` is ``Ending/failed`` (code and message).
        public var error: String?

        /// Unknown on Linux: FoundationNetworking does not report name resolution. Always `nil` there.
        public var domainLookup: ClosedRange<Duration>? { nil }
        /// Unknown on Linux: FoundationNetworking does not report the connection. Always `nil` there.
        public var connect: ClosedRange<Duration>? { nil }
        /// Unknown on Linux: FoundationNetworking does not report the TLS handshake. Always `nil` there.
        public var secureConnection: ClosedRange<Duration>? { nil }
        /// Unknown on Linux: whether libcurl reused a connection is not reported. Always `nil` there.
        public var reusedConnection: Bool? { nil }
        /// Unknown on Linux: the negotiated protocol (HTTP/1.1, h2) is not reported. Always `nil` there.
        public var networkProtocolName: String? { nil }
        /// Unknown on Linux: the peer's address is not reported. Always `nil` there.
        public var remoteAddress: String? { nil }

        /// Creates an attempt; Courier makes these for you.
        public init(number: Int, kind: Kind, method: String, url: URL?, continuesFrom: Int64?, start: Duration) {
            self.number = number
            self.kind = kind
            self.method = method
            self.url = url
            self.continuesFrom = continuesFrom
            self.start = start
        }

        /// Response head to last byte (or end): the time the body took.
        public var bodyDuration: Duration? {
            guard let head = responseHeaders, let last = lastBodyByte ?? end else { return nil }
            return last - head
        }
        /// Start (after any wait behind the host cap) to the response head.
        public var timeToHeaders: Duration? {
            responseHeaders.map { $0 - start - (queuedBehindHostCap ?? .zero) }
        }
    }

    /// A retry, as decided.
    public struct Retry: Sendable, Equatable, Codable {
        /// The attempt that failed.
        public var afterAttempt: Int
        /// Why it failed (the error's description).
        public var reason: String
        /// The wait before the next attempt.
        public var delay: Duration
        /// Since creation: when it was decided.
        public var at: Duration

        /// Creates a retry record; Courier makes these for you.
        public init(afterAttempt: Int, reason: String, delay: Duration, at: Duration) {
            self.afterAttempt = afterAttempt
            self.reason = reason
            self.delay = delay
            self.at = at
        }
    }

    /// A pause in the transfer.
    public struct Pause: Sendable, Equatable, Codable {
        /// What paused it.
        public enum Reason: String, Sendable, Codable, CaseIterable {
            /// `suspend()`.
            case suspended
            /// The disk fell behind the network (``DownloadPolicy/maximumBufferedBytes``).
            case disk
            /// A stream's consumer fell behind (``StreamPolicy/overflow`` `.pause`).
            case consumer
            /// The host had no route, and the request waited for one
            /// (``SessionManager/Configuration/waitsForConnectivity``, Docs/Reachability.md).
            case connectivity
        }

        /// What paused it.
        public var reason: Reason
        /// Since creation: when it paused.
        public var start: Duration
        /// Since creation: when it went on; `nil` while paused (or if it never did).
        public var end: Duration?
        /// Body bytes held when it paused.
        public var bytesHeld: Int64

        /// Creates a pause record; Courier makes these for you.
        public init(reason: Reason, start: Duration, end: Duration?, bytesHeld: Int64) {
            self.reason = reason
            self.start = start
            self.end = end
            self.bytesHeld = bytesHeld
        }
    }

    /// A redirect response, followed or refused.
    public struct Redirect: Sendable, Equatable, Codable {
        /// The redirect's status (301, 302, 303, 307, 308).
        public var statusCode: Int
        /// The URL that answered with the redirect.
        public var from: URL?
        /// Where it led (`nil` when the `Location` was missing or unusable).
        public var to: URL?
        /// Whether it was followed.
        public var followed: Bool
        /// Headers removed from the next request because it went to another origin.
        public var strippedHeaders: [String]
        /// Since creation: when it arrived.
        public var at: Duration

        /// Creates a redirect record; Courier makes these for you.
        public init(statusCode: Int, from: URL?, to: URL?, followed: Bool, strippedHeaders: [String], at: Duration) {
            self.statusCode = statusCode
            self.from = from
            self.to = to
            self.followed = followed
            self.strippedHeaders = strippedHeaders
            self.at = at
        }
    }
}

extension TaskMetrics {
    /// The most segment requests a timeline keeps (``segmentRequests``): a download of many small
    /// ranges must not grow it without bound. Here, beside the field, so that the split crew, which
    /// stops recording at it, and the recorder read it from the metrics and not from each other.
    static let segmentRequestLimit = 4096
}
