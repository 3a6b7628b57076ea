import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadQueue {
    /// One download in the queue, as journaled: what to fetch, where it goes, what it must be,
    /// and where it stands.
    public struct Item: Sendable, Equatable, Identifiable, Codable {
        /// The caller's id (or a generated UUID), stable across restarts.
        public let id: String
        /// The URL to fetch: the one added, or the latest a ``URLRefresher`` supplied.
        public internal(set) var url: URL
        /// Request headers sent with every attempt. They are journaled in the clear: put tokens
        /// in an adapter of the manager's interceptor, or in what the refresher returns, instead.
        public let headers: [String: String]
        /// Where the file is published.
        public let destination: URL
        /// The length the file must have, when known.
        public let expectedLength: Int64?
        /// The SHA-256 the file must have (lower-case hex), when known.
        public let sha256: String?
        /// Higher runs first; within a priority, the order items were added.
        public let priority: Int
        /// The caller's own data (JSON), at most ``DownloadQueue/maximumMetadataSize`` bytes.
        public let metadata: Data?
        /// Where the item stands.
        public internal(set) var state: State
        /// The order in which items were added (FIFO within a priority).
        public let sequence: UInt64
        /// The split as journaled: ``DownloadSplit/description`` (`"4"`, `"auto:16"`), `nil` for none.
        /// A string, read back by the one parser (``DownloadSplit/init(argument:)``), and absent
        /// when off, so a record without a split is byte for byte what earlier versions wrote and
        /// read, and their journals replay unchanged.
        var splitArgument: String? = nil

        /// How many connections the item's download may use (``NewItem/split``). When it starts,
        /// the queue caps it at the connections free on its host
        /// (``Configuration/maximumRunningPerHost`` counts every connection). A split this version
        /// cannot read (written by a newer one) is ``DownloadSplit/off``: it only costs speed.
        public var split: DownloadSplit {
            splitArgument.flatMap(DownloadSplit.init(argument:)) ?? .off
        }

        /// The journal's keys: the properties' names, and `split` for the split.
        enum CodingKeys: String, CodingKey {
            case id, url, headers, destination, expectedLength, sha256, priority, metadata, state, sequence
            case splitArgument = "split"
        }

        /// The split to journal for `split`: `nil` when off (nothing written).
        static func splitArgument(for split: DownloadSplit) -> String? {
            split.isSplit ? split.description : nil
        }

        /// Decodes ``metadata`` as `type`; `nil` when there is none.
        public func metadata<Value: Decodable>(as type: Value.Type) throws(CourierError) -> Value? {
            guard let metadata else { return nil }
            do {
                return try JSONDecoder().decode(type, from: metadata)
            } catch {
                throw CourierError(
                    code: .decodingFailed, message: "the item's metadata is not a \(type): \(error)", body: metadata,
                    underlyingError: error)
            }
        }

        /// The `host:port` the per-host cap counts.
        var hostKey: String { Self.hostKey(of: url) }
        /// Host and port: what the per-host cap and pausing offline count by.
        static func hostKey(of url: URL) -> String { "\(url.host ?? ""):\(url.port ?? -1)" }
    }

    /// Where an item stands.
    public enum State: Sendable, Equatable, Codable {
        /// Waiting for a slot.
        case queued
        /// Downloading: bytes in the file so far, and the total when known. (Journaled as
        /// running without the counts: after a restart the bytes on disk are what counts.)
        case running(received: Int64, total: Int64?)
        /// Paused by ``DownloadQueue/pause(_:)``; bytes kept.
        case paused
        /// Stopped by a failure that remained after the download's own retries.
        case failed(Failure)
        /// Stopped by ``DownloadQueue/cancel(_:)``; bytes discarded.
        case cancelled
        /// Published at this file.
        case completed(URL)

        /// Whether the item will not run again unless resumed (failed, cancelled) or is done.
        public var isFinished: Bool {
            switch self {
            case .failed, .cancelled, .completed: return true
            case .queued, .running, .paused: return false
            }
        }
    }

    /// Why an item failed, as journaled (a ``CourierError`` in short).
    public struct Failure: Sendable, Equatable, Codable {
        /// The error's code, e.g. ``CourierError/Code-swift.struct/integrityFailed``. The journal
        /// stores its name, as it always has.
        public let code: CourierError.Code
        /// The error's ``CourierError/message``: its URLs masked (``Redaction/default``), so the
        /// journal and whoever prints it never hold a secret query parameter or user info.
        public let message: String
        /// The HTTP status, when the server answered.
        public let status: Int?
        /// Whether trying again later might succeed: a transient failure
        /// (``CourierError/Code-swift.struct/isTransient``), any transport failure, a 5xx, 408 or
        /// 429, or the download's deadline; `resume(_:)` tries again.
        public let isRetryable: Bool

        /// The failure `error` stands for, as a store records it.
        public init(_ error: CourierError) {
            code = error.code
            message = error.message
            status = error.response?.statusCode
            isRetryable = Self.mayPassLater(error)
        }

        /// "Later" here means a later run, minutes or hours on, not the next attempt: besides the
        /// transient codes, what the passing of that time can mend is worth resuming.
        static func mayPassLater(_ error: CourierError) -> Bool {
            let status = error.response?.statusCode ?? 0
            // A later run has a deadline of its own.
            let laterRunHasAFreshDeadline = error.code == .deadlineExceeded
            // DNS and TLS failures too: a machine that was offline or behind a captive portal fails
            // every host that way, and works again once it is back.
            let networkMayBeBack = error.isTransport
            let serverMayRecover = status >= 500 || status == 408 || status == 429
            return error.code.isTransient || laterRunHasAFreshDeadline || networkMayBeBack || serverMayRecover
        }
    }

    /// A download to add.
    public struct NewItem: Sendable {
        /// Creates a download of `url` (GET) published at `destination`.
        public init(
            url: URL, to destination: URL, id: String? = nil, headers: [String: String] = [:],
            expectedLength: Int64? = nil, sha256: String? = nil, priority: Int = 0, split: DownloadSplit = .off
        ) {
            self.url = url
            self.destination = destination
            self.id = id
            self.headers = headers
            self.expectedLength = expectedLength
            self.sha256 = sha256
            self.priority = priority
            self.split = split
        }

        /// The URL to fetch.
        public var url: URL
        /// Where the file is published (its directory is created when missing).
        public var destination: URL
        /// A stable id of your choice; `nil` generates a UUID.
        public var id: String?
        /// Headers sent with every attempt (journaled in the clear).
        public var headers: [String: String]
        /// The length the file must have.
        public var expectedLength: Int64?
        /// The SHA-256 the file must have, as hex.
        public var sha256: String?
        /// Higher runs first.
        public var priority: Int
        /// How many connections the download may use (Docs/SegmentedDownloads.md). Default
        /// ``DownloadSplit/off``. Each connection counts against
        /// ``Configuration/maximumRunningPerHost``: the item starts while one is free on its
        /// host, with its split capped at what is free. It replaces the split of
        /// ``Configuration/policy``, which the queue does not use.
        public var split: DownloadSplit
        /// Your own small data, stored as JSON with the item.
        public var metadata: Data?

        /// Stores `value` as the item's metadata (JSON).
        public mutating func setMetadata(_ value: some Encodable) throws(CourierError) {
            do {
                metadata = try JSONEncoder().encode(value)
            } catch {
                throw CourierError(code: .invalidRequest, message: "the metadata cannot be encoded: \(error)", underlyingError: error)
            }
        }
    }

    /// A change of one item's state, as ``DownloadQueue/changes(bufferingNewest:)`` and observers see it.
    public struct Change: Sendable, Equatable {
        /// The item after the change.
        public let item: Item
        /// The item's id.
        public var id: String { item.id }
        /// The new state.
        public var state: State { item.state }
        /// Who tries the item again, when that is what the change says (Docs/Retries.md):
        /// ``RetryOwner/queueRefresh`` as the refresher is asked for a new URL (the state is
        /// unchanged), ``RetryOwner/routeWait`` as an item that lost its route goes back to
        /// `queued` until the route returns; `nil` for every other change. A download's own
        /// retries are the manager's monitors' (``EventMonitor/taskWillRetry(_:event:)``).
        public let retry: RetryOwner?

        init(item: Item, retry: RetryOwner? = nil) {
            self.item = item
            self.retry = retry
        }
    }

    /// Why the queue asks for a fresh request.
    public enum RefreshReason: Sendable, Equatable {
        /// Before an attempt (``Configuration/refreshesBeforeEachAttempt``).
        case beforeAttempt
        /// The server answered with this status, which suggests the URL expired (401, 403, 410 by default).
        case expired(status: Int)
    }

    /// Returns a fresh request for the same resource (a newly signed URL), or `nil` to let the
    /// item fail. Called off the queue's lock; it may take its time (ask an API).
    public typealias URLRefresher = @Sendable (_ item: Item, _ reason: RefreshReason) async throws -> URLRequest?
}
