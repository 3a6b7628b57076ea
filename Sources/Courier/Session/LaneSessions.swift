import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The extra URLSessions a split download's connections run in (Docs/SegmentedDownloads.md, "Lanes").
///
/// One URLSession is one libcurl multi handle: over HTTP/2 its requests to a host share one TCP
/// connection, so segments in one session would not be separate connections. Each lane is a
/// session of its own, with the manager's configuration, TLS policies and call queue, a router and
/// table of its own (task identifiers restart in every session), and a delegate queue of its own.
/// Lanes are made when first needed and live as long as the manager; connection `k` of every split
/// download of the manager runs in lane `k`.
final class LaneSessions: Sendable {
    private struct State {
        var lanes: [Int: SessionCore] = [:]
        var isClosed = false
    }

    private let state = Locked(State())
    private let configuration: URLSessionConfiguration
    private let label: String
    private let callQueue: DispatchQueue
    private let tls: TLSEnforcer

    init(configuration: URLSessionConfiguration, label: String, callQueue: DispatchQueue, tls: TLSEnforcer) {
        // A copy: the caller's configuration object may change later.
        self.configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        self.label = label
        self.callQueue = callQueue
        self.tls = tls
    }

    /// Lane `index`, made on first use; `nil` once the manager is invalidated.
    func lane(_ index: Int) -> SessionCore? {
        state.withLock { state in
            guard !state.isClosed else { return nil }
            if let lane = state.lanes[index] { return lane }
            let router = SessionDelegate(table: TaskDelegateTable(), callQueue: callQueue, didInvalidate: { _ in })
            let lane = SessionCore(
                configuration: configuration, router: router, label: "\(label).lane\(index)", callbackQueue: nil,
                callQueue: callQueue, tls: tls)
            state.lanes[index] = lane
            return lane
        }
    }

    /// Requests running or waiting in every lane: none once every split download has ended.
    var requestCount: Int {
        state.withLock { Array($0.lanes.values) }.reduce(0) { $0 + $1.table.runningCount + $1.table.waitingCount }
    }

    /// Invalidates every lane (the manager is invalidated); no lane is made afterwards.
    func invalidate(cancelingTasks: Bool) {
        let lanes = state.withLock { state -> [SessionCore] in
            state.isClosed = true
            return Array(state.lanes.values)
        }
        for lane in lanes { lane.invalidate(cancelingTasks: cancelingTasks) }
    }
}
