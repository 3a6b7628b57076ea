import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// The extra URLSessions split downloads' connections run in (Docs/SegmentedDownloads.md, "Lanes").
///
/// One URLSession is one libcurl multi handle: over HTTP/2 its requests to a host share one TCP
/// connection, so segments in one session would not be separate connections. Each lane is a
/// session of its own, with the manager's configuration, TLS policies and call queue, a router and
/// table of its own (task identifiers restart in every session), and a delegate queue of its own.
///
/// **Lanes belong to one split download** (a ``Lease``) and are invalidated when it ends, which
/// closes their idle keep-alive connections. Lanes shared by every download of the manager kept
/// them open after the download that used them ended: a server then saw those idle connections
/// beside the next downloads' (7–8 established connections under a queue cap of 6, issue 30).
/// Each lane session allows one connection per host, so a lane holds at most one, busy or idle,
/// and a request that follows a cancelled one on the same lane reuses or replaces it instead of
/// opening a second. The price is one new connection per lane per download (a handshake, which
/// a split download pays for its first range anyway); the ranges of one download reuse them.
final class LaneSessions: Sendable {
    private struct State {
        /// Leases not released yet: the manager's invalidation reaches their lanes through here.
        var leases: [ObjectIdentifier: Lease] = [:]
        var isClosed = false
    }

    private let state = Locked(State())
    private let configuration: URLSessionConfiguration
    private let label: String
    private let callQueue: DispatchQueue
    private let tls: TLSEnforcer

    init(configuration: URLSessionConfiguration, label: String, callQueue: DispatchQueue, tls: TLSEnforcer) {
        // A copy: the caller's configuration object may change later.
        let copy = configuration.copy() as? URLSessionConfiguration ?? configuration
        // One connection per host and lane: a lane runs one request of its download at a time.
        copy.httpMaximumConnectionsPerHost = 1
        self.configuration = copy
        self.label = label
        self.callQueue = callQueue
        self.tls = tls
    }

    /// The lanes of one split download: made when first used, invalidated together by ``release()``.
    final class Lease: Sendable {
        private struct State {
            var lanes: [Int: SessionCore] = [:]
            var isReleased = false
        }

        private let state = Locked(State())
        private weak let owner: LaneSessions?

        fileprivate init(owner: LaneSessions) {
            self.owner = owner
        }

        /// Lane `index` (1 or more), made on first use; `nil` once released or the manager is invalidated.
        func lane(_ index: Int) -> SessionCore? {
            guard let owner else { return nil }
            return state.withLock { state -> SessionCore? in
                guard !state.isReleased, !owner.isClosed else { return nil }
                if let lane = state.lanes[index] { return lane }
                let lane = owner.makeLane(index)
                state.lanes[index] = lane
                return lane
            }
        }

        /// Invalidates every lane of the download, which closes their idle connections; no lane
        /// is made afterwards, and calling it again does nothing. With `cancelingTasks` (a crew
        /// that ended, whose requests are cancelled already) what still runs there is cancelled;
        /// without it (the manager is invalidated without cancelling) it finishes first.
        func release(cancelingTasks: Bool = true) {
            let lanes = state.withLock { state -> [SessionCore] in
                guard !state.isReleased else { return [] }
                state.isReleased = true
                defer { state.lanes = [:] }
                return Array(state.lanes.values)
            }
            owner?.forget(self)
            for lane in lanes { lane.invalidate(cancelingTasks: cancelingTasks) }
        }

        /// Requests running or waiting in the lease's lanes.
        var requestCount: Int {
            state.withLock { Array($0.lanes.values) }.reduce(0) { $0 + $1.table.runningCount + $1.table.waitingCount }
        }
    }

    /// A new lease for one split download; ``Lease/release()`` it when the download's crew ends.
    func lease() -> Lease {
        let lease = Lease(owner: self)
        state.withLock { state in
            if !state.isClosed { state.leases[ObjectIdentifier(lease)] = lease }
        }
        return lease
    }

    private var isClosed: Bool { state.withLock { $0.isClosed } }

    private func forget(_ lease: Lease) {
        _ = state.withLock { $0.leases.removeValue(forKey: ObjectIdentifier(lease)) }
    }

    private func makeLane(_ index: Int) -> SessionCore {
        let router = SessionDelegate(table: TaskDelegateTable(), callQueue: callQueue, didInvalidate: { _ in })
        return SessionCore(
            configuration: configuration, router: router, label: "\(label).lane\(index)", callbackQueue: nil,
            callQueue: callQueue, tls: tls)
    }

    /// Requests running or waiting in every lane: none once every split download has ended.
    var requestCount: Int {
        state.withLock { Array($0.leases.values) }.reduce(0) { $0 + $1.requestCount }
    }

    /// Split downloads holding lanes now (their crews have not ended).
    var leaseCount: Int { state.withLock { $0.leases.count } }

    /// Releases every lease (the manager is invalidated); no lane is made afterwards.
    func invalidate(cancelingTasks: Bool) {
        let leases = state.withLock { state -> [Lease] in
            state.isClosed = true
            defer { state.leases = [:] }
            return Array(state.leases.values)
        }
        for lease in leases { lease.release(cancelingTasks: cancelingTasks) }
    }
}
