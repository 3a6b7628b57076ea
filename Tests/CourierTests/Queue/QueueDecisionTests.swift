import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The queue's decisions without sockets (DownloadQueue+Decisions.swift): what pause, resume,
/// cancel and remove do to an item in each state and run phase, the publication gate, and what
/// a run's completion records. Nothing here is journaled or acted on: the records and actions
/// are what the queue would journal, then do.
final class QueueDecisionTests: XCTestCase {
    typealias State = DownloadQueue.State
    typealias Phase = DownloadQueue.Running.Phase

    private var manager: SessionManager!
    private var directory: URL!
    /// A download task that is never resumed: a running entry's task, so stopping it is an action.
    private var task: DownloadTask!
    private let run = DownloadQueue.Run(id: "a", token: 7)
    private let file = URL(fileURLWithPath: "/tmp/courier-decisions/a")

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        manager = SessionManager()
        task = manager.downloadTask(
            with: URLRequest(url: URL(string: "http://127.0.0.1:9/a")!), to: .file(directory.appendingPathComponent("a"))
        ) { _ in }
    }

    override func tearDownWithError() throws {
        manager.invalidate(cancelingTasks: true)
        try? FileManager.default.removeItem(at: directory)
        task = nil
        manager = nil
        try super.tearDownWithError()
    }

    /// A state holding item "a" in `state`; with `phase`, its run (token 7) is in that phase.
    private func queue(_ state: State, phase: Phase? = nil, task: DownloadTask? = nil) -> DownloadQueue.QueueState {
        let item = DownloadQueue.Item(
            id: "a", url: URL(string: "http://h:80/a")!, headers: [:], destination: file, expectedLength: nil, sha256: nil,
            priority: 0, metadata: nil, state: state, sequence: 1)
        var queue = DownloadQueue.QueueState()
        queue.items["a"] = item
        if state == .queued { queue.order.insert(item) }
        if let phase {
            queue.running["a"] = DownloadQueue.Running(host: item.hostKey, token: 7, task: task ?? self.task, phase: phase)
            queue.connectionsPerHost[item.hostKey] = 1
        }
        return queue
    }

    /// The records decided so far, in short: `state:<state>` or `remove`.
    private func records(_ queue: DownloadQueue.QueueState) -> [String] {
        queue.records.map { data in
            switch try? JSONDecoder().decode(DownloadQueue.Record.self, from: data) {
            case .state(_, let state)?: return "state:\(name(state))"
            case .remove?: return "remove"
            case .add?: return "add"
            case .url?: return "url"
            case nil: return "?"
            }
        }
    }

    /// The actions decided so far, in short.
    private func actions(_ queue: DownloadQueue.QueueState) -> [String] {
        queue.actions.map { action in
            switch action {
            case .emit(let item, let retry): return "emit:\(name(item.state))" + (retry.map { "(\($0))" } ?? "")
            case .stopTask(_, let keeping): return keeping ? "stopTask(keep)" : "stopTask(discard)"
            case .removePartialFiles: return "removePartialFiles"
            case .start: return "start"
            case .launch: return "launch"
            case .refresh: return "refresh"
            case .signal: return "signal"
            case .stopped: return "stopped"
            case .recheckHosts: return "recheckHosts"
            }
        }
    }

    private func name(_ state: State) -> String {
        switch state {
        case .queued: return "queued"
        case .running: return "running"
        case .paused: return "paused"
        case .failed(let failure): return "failed(\(failure.code))"
        case .cancelled: return "cancelled"
        case .completed: return "completed"
        }
    }

    private static let failure = DownloadQueue.Failure(CourierError(code: .timedOut, message: "slow"))
    private static let running = State.running(received: 0, total: nil)

    // MARK: - Requests

    func testEveryRequestInEveryStateAndPhaseDecidesTheTableRow() {
        // Given an item in each state (a running one in each phase of its run), when each
        // request is decided, then the item's state, the records, the actions and the run are these.
        struct Row {
            let request: DownloadQueue.Request
            let state: State
            var phase: Phase? = nil
            let after: String?  // the item's state after, nil when removed
            let records: [String]
            let actions: [String]
            var phaseAfter: Phase? = nil  // the run's phase after (nil: no run)
        }
        let failed = State.failed(Self.failure)
        let rows: [Row] = [
            Row(request: .pause, state: .queued, after: "paused", records: ["state:paused"], actions: ["emit:paused"]),
            Row(
                request: .pause, state: Self.running, phase: .active, after: "paused", records: ["state:paused"],
                actions: ["emit:paused", "stopTask(keep)"], phaseAfter: .ending),
            // Completion wins over a late pause: nothing is decided.
            Row(
                request: .pause, state: Self.running, phase: .publishing, after: "running", records: [], actions: [],
                phaseAfter: .publishing),
            Row(request: .pause, state: .paused, after: "paused", records: [], actions: []),
            Row(request: .pause, state: failed, after: "failed(timedOut)", records: [], actions: []),
            Row(request: .pause, state: .cancelled, after: "cancelled", records: [], actions: []),
            Row(request: .pause, state: .completed(file), after: "completed", records: [], actions: []),

            Row(request: .resume, state: .paused, after: "queued", records: ["state:queued"], actions: ["emit:queued"]),
            Row(request: .resume, state: failed, after: "queued", records: ["state:queued"], actions: ["emit:queued"]),
            Row(request: .resume, state: .cancelled, after: "queued", records: ["state:queued"], actions: ["emit:queued"]),
            Row(request: .resume, state: .queued, after: "queued", records: [], actions: []),
            Row(
                request: .resume, state: Self.running, phase: .active, after: "running", records: [], actions: [],
                phaseAfter: .active),
            Row(
                request: .resume, state: Self.running, phase: .publishing, after: "running", records: [], actions: [],
                phaseAfter: .publishing),
            Row(request: .resume, state: .completed(file), after: "completed", records: [], actions: []),

            Row(
                request: .cancel, state: .queued, after: "cancelled", records: ["state:cancelled"],
                actions: ["emit:cancelled", "removePartialFiles"]),
            Row(
                request: .cancel, state: Self.running, phase: .active, after: "cancelled", records: ["state:cancelled"],
                actions: ["stopTask(discard)", "emit:cancelled", "removePartialFiles"], phaseAfter: .ending),
            // A cancel after publication reports completion: the file is never deleted.
            Row(
                request: .cancel, state: Self.running, phase: .publishing, after: "running", records: [], actions: [],
                phaseAfter: .publishing),
            Row(
                request: .cancel, state: .paused, after: "cancelled", records: ["state:cancelled"],
                actions: ["emit:cancelled", "removePartialFiles"]),
            Row(
                request: .cancel, state: failed, after: "cancelled", records: ["state:cancelled"],
                actions: ["emit:cancelled", "removePartialFiles"]),
            Row(request: .cancel, state: .cancelled, after: "cancelled", records: [], actions: []),
            Row(request: .cancel, state: .completed(file), after: "completed", records: [], actions: []),

            Row(request: .remove, state: .queued, after: nil, records: ["remove"], actions: ["removePartialFiles"]),
            Row(
                request: .remove, state: Self.running, phase: .active, after: nil, records: ["remove"],
                actions: ["stopTask(discard)", "removePartialFiles"], phaseAfter: .ending),
            // The rename finishes and the file stays; the run's outcome is no item's now.
            Row(
                request: .remove, state: Self.running, phase: .publishing, after: nil, records: ["remove"], actions: [],
                phaseAfter: .ending),
            Row(request: .remove, state: .paused, after: nil, records: ["remove"], actions: ["removePartialFiles"]),
            Row(request: .remove, state: failed, after: nil, records: ["remove"], actions: ["removePartialFiles"]),
            Row(request: .remove, state: .cancelled, after: nil, records: ["remove"], actions: ["removePartialFiles"]),
            Row(request: .remove, state: .completed(file), after: nil, records: ["remove"], actions: ["removePartialFiles"]),
        ]
        for row in rows {
            var state = queue(row.state, phase: row.phase)
            state.apply(row.request, to: "a")
            let label = "\(row.request) when \(name(row.state))\(row.phase.map { " (\($0))" } ?? "")"
            XCTAssertEqual(state.items["a"].map { name($0.state) }, row.after, label)
            XCTAssertEqual(records(state), row.records, label)
            XCTAssertEqual(actions(state), row.actions, label)
            XCTAssertEqual(state.running["a"]?.phase, row.phaseAfter, label)
            XCTAssertEqual(state.order.count, row.after == "queued" ? 1 : 0, label)
        }
        // Every request was tried in every state.
        XCTAssertEqual(Set(rows.map { "\($0.request)" }).count, DownloadQueue.Request.allCases.count)
    }

    func testARunNotLaunchedYetIsReleasedAtOnceWhenPausedCancelledOrRemoved() {
        for request in [DownloadQueue.Request.pause, .cancel, .remove] {
            // Given a run waiting for its journal record (no task yet)
            var state = queue(Self.running, phase: .active)
            state.running["a"]?.task = nil
            // When it is paused, cancelled or removed
            state.apply(request, to: "a")
            // Then its slot is free and there is no task to stop
            XCTAssertNil(state.running["a"], "\(request)")
            XCTAssertEqual(state.connectionsPerHost, [:], "\(request)")
            XCTAssertFalse(actions(state).contains { $0.hasPrefix("stopTask") }, "\(request)")
        }
    }

    // MARK: - The publication gate

    func testTheGateAdmitsTheCurrentRunWhileItsItemIsRunningAndNoneAfterAPauseCancelOrRemove() {
        // An active run, or one stopped by a shutdown (its item still running), may publish.
        for phase in [Phase.active, .stopping] {
            var state = queue(Self.running, phase: phase)
            XCTAssertTrue(state.beginPublishing(run), "\(phase)")
            XCTAssertEqual(state.running["a"]?.phase, .publishing)
            XCTAssertEqual(state.records, [])  // the gate journals nothing: reopening recognises the file
            XCTAssertFalse(state.beginPublishing(run), "asked twice")
        }
        // A run paused, cancelled or removed first may not.
        for request in [DownloadQueue.Request.pause, .cancel, .remove] {
            var state = queue(Self.running, phase: .active)
            state.apply(request, to: "a")
            XCTAssertFalse(state.beginPublishing(run), "after \(request)")
            XCTAssertEqual(state.running["a"]?.phase, .ending)
        }
        // Nor a run that is no longer the item's (an earlier token), nor one of an unknown item.
        var state = queue(Self.running, phase: .active)
        XCTAssertFalse(state.beginPublishing(DownloadQueue.Run(id: "a", token: 6)))
        XCTAssertFalse(state.beginPublishing(DownloadQueue.Run(id: "b", token: 7)))
        XCTAssertEqual(state.running["a"]?.phase, .active)
    }

    // MARK: - Completion

    func testCompletionWinsOverAPauseOrCancelThatCameAfterTheGate() {
        for request in [DownloadQueue.Request.pause, .cancel, .resume] {
            // Given a run past the gate
            var state = queue(Self.running, phase: .active)
            XCTAssertTrue(state.beginPublishing(run))
            // When a pause or cancel comes, then its file is published
            state.apply(request, to: "a")
            state.finish(run, with: .success(file), configuration: .init())
            // Then the item is completed, and that is what the journal says
            XCTAssertEqual(state.items["a"]?.state, .completed(file), "\(request)")
            XCTAssertEqual(records(state), ["state:completed"], "\(request)")
            XCTAssertNil(state.running["a"])
        }
    }

    func testARunStoppedBeforeTheGateChangesNothingWhenItEnds() {
        // Given a run paused (its task stopping), then resumed (waiting for the old run)
        var state = queue(Self.running, phase: .active)
        state.apply(.pause, to: "a")
        state.apply(.resume, to: "a")
        _ = state.order.popNext { _ in true }
        state.deferred.insert("a")
        state.records = []
        // When the old run ends (refused at the gate, so cancelled)
        XCTAssertFalse(state.beginPublishing(run))
        state.finish(run, with: .failure(CourierError(code: .cancelled, message: "refused")), configuration: .init())
        // Then nothing is journaled; the item goes back in the order for its next run
        XCTAssertEqual(records(state), [])
        XCTAssertEqual(state.items["a"]?.state, .queued)
        XCTAssertNil(state.running["a"])
        XCTAssertEqual(state.order.count, 1)
    }

    func testARunThatFailedForWantOfARouteGoesBackToTheQueueAndHoldsItsHostBack() {
        // Given a running item
        var state = queue(Self.running, phase: .active)
        state.records = []
        state.actions = []
        // When its run fails because the host has no route
        let unreachable = CourierError.networkUnreachable(url: URL(string: "http://h:80/a"), waited: nil, underlying: nil)
        state.finish(run, with: .failure(unreachable), configuration: .init())
        // Then it is queued again (not failed), its host is held back, and the hosts are checked again
        XCTAssertEqual(records(state), ["state:queued"])
        XCTAssertEqual(state.items["a"]?.state, .queued)
        XCTAssertEqual(state.order.count, 1)
        XCTAssertEqual(state.unreachableHosts, ["h:80"])
        XCTAssertEqual(actions(state), ["emit:queued(route-wait)", "recheckHosts"])
        XCTAssertNil(state.running["a"])

        // And with pausing offline turned off, the same failure fails the item
        var failing = queue(Self.running, phase: .active)
        var configuration = DownloadQueue.Configuration()
        configuration.pausesWhileOffline = false
        failing.finish(run, with: .failure(unreachable), configuration: configuration)
        guard case .failed(let failure)? = failing.items["a"]?.state else { return XCTFail("\(String(describing: failing.items["a"]))") }
        XCTAssertEqual(failure.code, .networkUnreachable)
    }

    func testARunRefusedForAnExpiredURLAsksTheRefresherAnnouncedAsAQueueRefresh() {
        // Given a running item of a queue with a refresher
        var state = queue(Self.running, phase: .active)
        state.records = []
        state.actions = []
        var configuration = DownloadQueue.Configuration()
        configuration.refresher = { _, _ in nil }
        // When its run fails with a 403
        let forbidden = CourierError(
            code: .unacceptableStatusCode, message: "403", url: URL(string: "http://h:80/a"),
            response: HTTPURLResponse(url: URL(string: "http://h:80/a")!, statusCode: 403, httpVersion: nil, headerFields: nil))
        state.finish(run, with: .failure(forbidden), configuration: configuration)
        // Then the item keeps its state and its slot, a change names the queue's refresh, and the refresher is asked
        XCTAssertEqual(records(state), [])
        XCTAssertEqual(state.items["a"]?.state, Self.running)
        XCTAssertEqual(actions(state), ["emit:running(queue-refresh)", "refresh"])
        XCTAssertNotNil(state.running["a"])
    }

    func testAPublishingRunEndsItsItemDuringAShutdownAndAFailedRenameIsAFailure() {
        // Given a shutdown under way and a run past the gate
        var state = queue(Self.running, phase: .active)
        XCTAssertTrue(state.beginPublishing(run))
        state.stopping = true
        state.stopRunning("a", as: .stopping, keepingBytes: true)
        XCTAssertEqual(state.running["a"]?.phase, .publishing, "a shutdown leaves a publishing run to finish")
        // When its rename fails
        let error = CourierError(code: .destinationFailed, message: "a file already exists")
        state.finish(run, with: .failure(error), configuration: .init())
        // Then the item failed, journaled before the queue closes
        XCTAssertEqual(records(state), ["state:failed(destinationFailed)"])
        XCTAssertNil(state.running["a"])

        // A run stopped by the shutdown that ends without publishing records nothing (the
        // journal keeps it running, so the next open continues it).
        var stopped = queue(Self.running, phase: .active)
        stopped.stopping = true
        stopped.stopRunning("a", as: .stopping, keepingBytes: true)
        stopped.finish(run, with: .failure(CourierError(code: .cancelled, message: "stopped")), configuration: .init())
        XCTAssertEqual(records(stopped), [])
        XCTAssertEqual(stopped.items["a"]?.state, Self.running)
    }

    func testAnItemAddedAgainAfterARemoveNeverInheritsTheOldRunsOutcome() {
        // Given a run past the gate, its item removed and added again with the same id
        var state = queue(Self.running, phase: .active)
        XCTAssertTrue(state.beginPublishing(run))
        state.apply(.remove, to: "a")
        state.items["a"] = DownloadQueue.Item(
            id: "a", url: URL(string: "http://h:80/a")!, headers: [:], destination: file, expectedLength: nil, sha256: nil,
            priority: 0, metadata: nil, state: .queued, sequence: 2)
        state.deferred.insert("a")
        state.records = []
        // When the old run's file is published
        state.finish(run, with: .success(file), configuration: .init())
        // Then the new item is still queued, waiting for its own run
        XCTAssertEqual(state.items["a"]?.state, .queued)
        XCTAssertEqual(records(state), [])
        XCTAssertEqual(state.order.count, 1)
    }
}
