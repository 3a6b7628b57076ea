@testable import Courier

/// The expected "who tries again" table, in one place: for every kind of transfer and every kind
/// of failure, the owner that tries again (``RetryOwner``) and how many times, or no retry.
/// `RetryOwnerTableTests` asserts it over real sockets (the no-route column through the pure
/// decisions), and `RetriesDocTests` checks that Docs/Retries.md names the same owners.
///
/// Every policy in those tests allows 2 retries (an event stream: 2 reconnections), so a
/// transient failure that keeps failing is tried again twice.
enum RetryTable {
    /// What is transferred.
    enum Kind: String, CaseIterable {
        case data, download, splitDownload, stream, eventStream, queueItem
    }

    /// What goes wrong on every connection to the host.
    enum Failure: String, CaseIterable {
        /// An RST as soon as the request head is read.
        case reset
        /// A port that was bound, then closed.
        case refused
        /// A `.invalid` host.
        case dns
        /// A certificate from a CA the client does not trust.
        case tls
        /// The kernel has no route to the host (waiting for connectivity where the kind can).
        case noRoute
        /// `503` with `Retry-After: 0`, every time.
        case unavailableRetryAfter
        /// No answer before the task's deadline.
        case deadline
        /// `401` for the old token, then success once the authenticator refreshed it.
        case unauthorized
    }

    /// One cell: who tries again and how many times; `owner == nil` means no retry.
    struct Cell: Equatable, CustomStringConvertible {
        let owner: RetryOwner?
        let count: Int

        static let noRetry = Cell(owner: nil, count: 0)
        static func retried(by owner: RetryOwner, _ count: Int) -> Cell { Cell(owner: owner, count: count) }

        var description: String { owner.map { "\($0) ×\(count)" } ?? "no retry" }
    }

    /// The retries every policy allows.
    static let retryLimit = 2

    /// The table.
    static func expected(_ kind: Kind, _ failure: Failure) -> Cell {
        switch failure {
        case .reset, .refused:
            // Transient: the attempt retry (a queue item's download policy too), or the stream's reconnection.
            return kind == .eventStream ? .retried(by: .reconnect, retryLimit) : .retried(by: .attempt, retryLimit)
        case .dns, .tls, .deadline:
            // Not transient: a name, a certificate and a spent deadline fail the same way again.
            return .noRetry
        case .noRoute:
            switch kind {
            // A stream's consumer has seen its bytes: it fails with networkUnreachable, never waits.
            case .stream: return .noRetry
            // The stream reconnects, its wait ending early when the route is back.
            case .eventStream: return .retried(by: .reconnect, 1)
            // The request waits for the route, spending no retry; a queue item goes back to `queued`.
            case .data, .download, .splitDownload, .queueItem: return .retried(by: .routeWait, 1)
            }
        case .unavailableRetryAfter:
            // WHATWG: an event stream ends at a refused status. A split download meets the 503
            // on its first request, before any split: the attempt's.
            return kind == .eventStream ? .noRetry : .retried(by: .attempt, retryLimit)
        case .unauthorized:
            // One refresh for the refusal, for every kind (an event stream's connection too).
            return .retried(by: .refresh, 1)
        }
    }
}
