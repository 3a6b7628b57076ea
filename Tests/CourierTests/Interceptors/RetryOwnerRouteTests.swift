import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// The no-route column of ``RetryTable``, through the pure decisions: a host the kernel has no
/// route to cannot be made in this machine's own network namespace without changing its routes
/// (NetworkNamespaceTests does it end to end, as root, in a namespace of its own). The driver
/// gives the decision the route as a fact (``AttemptFacts/routeIsGone``); each kind's decision
/// is asked with it, and what it announces next carries the table's owner.
final class RetryOwnerRouteTests: XCTestCase {
    private static let session = URLSession(configuration: .ephemeral)
    private let url = URL(string: "http://files.test/big.bin")!
    private let lost = URLError(.networkConnectionLost)
    private let gone = AttemptFacts(invalidated: false, routeIsGone: true)

    /// A transfer of `kind` that waits for connectivity, running its first attempt.
    private func running(_ kind: TransferTask.Kind) -> TransferState {
        var state = TransferState(
            context: TransferState.Context(
                originalRequest: URLRequest(url: url), upload: nil, validation: .default, maximumResponseSize: 1 << 20,
                progressInterval: .seconds(1), temporaryDirectory: FileManager.default.temporaryDirectory,
                emitsEvents: false, waitsForConnectivity: true),
            options: TaskOptions(interceptor: nil, redirectPolicy: .follow, credential: nil, sensitiveHeaders: [], deadline: nil),
            now: .now)
        switch kind {
        case .download(let plan):
            // Never opened: the attempt fails before any byte (and a decision never reaches the disk).
            state.file = FileBody(plan: plan)
        case .stream(let buffer, let policy):
            state.stream = StreamBody(buffer: buffer, policy: policy)
        case .data, .upload:
            break
        }
        _ = state.phase.resumeRequested()
        let number = state.phase.attemptQueued()
        XCTAssertEqual(state.phase.attemptMade(Self.session.dataTask(with: url), number: number), .start)
        return state
    }

    private func download(split: DownloadSplit) -> TransferTask.Kind {
        var policy = DownloadPolicy()
        policy.split = split
        return .download(
            DownloadPlan(
                destination: .file(FileManager.default.temporaryDirectory.appendingPathComponent("route-\(UUID().uuidString)")),
                policy: policy, validation: .default, partialFile: nil, resumeFrom: nil))
    }

    /// What one transfer kind's decision does after a lost connection with no route: the owner of
    /// the next attempt, or `nil` when the task ends.
    private func ownerAfterLostRoute(_ kind: TransferTask.Kind) -> RetryTable.Cell {
        var state = running(kind)
        switch state.attemptEnded(lost, facts: gone) {
        case .retry(_, let delay, let event):
            // No retry event: the wait spends no retry; the next attempt's continuation names it.
            XCTAssertNil(event)
            XCTAssertEqual(delay, .zero)
            return state.metrics.nextOwner.map { RetryTable.Cell.retried(by: $0, 1) } ?? .noRetry
        case .finish(let completion):
            XCTAssertEqual(completion.outcome.error?.code, .networkUnreachable)
            return .noRetry
        default:
            XCTFail("a wait for the route or the end")
            return .noRetry
        }
    }

    func testATransferWithNoRouteToItsHostIsTriedAgainByTheOwnerTheTableNames() throws {
        // Given each kind of task with no route to its host, when its attempt fails, then who
        // tries again is the table's
        let kinds: [(RetryTable.Kind, TransferTask.Kind)] = [
            (.data, .data), (.download, download(split: .off)), (.splitDownload, download(split: .connections(4))),
            (.stream, .stream(StreamBuffer(url: url, limit: 1 << 20), StreamPolicy())),
        ]
        for (kind, transfer) in kinds {
            XCTAssertEqual(ownerAfterLostRoute(transfer), RetryTable.expected(kind, .noRoute), "\(kind)")
        }
    }

    func testAnEventStreamWithNoRouteReconnects() {
        // Given an event stream whose connection failed because the route went away
        let state = ReconnectState(policy: ReconnectPolicy(), reconnects: true, pausesOnOverflow: false)
        let unreachable = CourierError.networkUnreachable(url: url, waited: nil, underlying: nil)
        // Then it reconnects (its wait ends early when the route is back): the table's owner
        let cell: RetryTable.Cell = state.mayReconnect(after: unreachable) ? .retried(by: .reconnect, 1) : .noRetry
        XCTAssertEqual(cell, RetryTable.expected(.eventStream, .noRoute))
    }

    func testAQueueItemWithNoRouteGoesBackToTheQueueAnnouncedAsARouteWait() throws {
        // Given a running queue item
        let manager = SessionManager()
        defer { manager.invalidate(cancelingTasks: true) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("route-\(UUID().uuidString)")
        let task = manager.downloadTask(with: URLRequest(url: url), to: .file(file)) { _ in }
        let item = DownloadQueue.Item(
            id: "a", url: url, headers: [:], destination: file, expectedLength: nil, sha256: nil, priority: 0,
            metadata: nil, state: .running(received: 0, total: nil), sequence: 1)
        var queue = DownloadQueue.QueueState()
        queue.items["a"] = item
        queue.running["a"] = DownloadQueue.Running(host: item.hostKey, token: 7, task: task, phase: .active)
        queue.connectionsPerHost[item.hostKey] = 1
        // When its run fails because the host has no route
        let unreachable = CourierError.networkUnreachable(url: url, waited: nil, underlying: nil)
        queue.finish(DownloadQueue.Run(id: "a", token: 7), with: .failure(unreachable), configuration: .init())
        // Then the change that puts it back in the queue names the table's owner, once
        let owners = queue.actions.compactMap { action -> RetryOwner? in
            if case .emit(_, let retry) = action { return retry }
            return nil
        }
        let cell = RetryTable.Cell(owner: owners.first, count: owners.count)
        XCTAssertEqual(cell, RetryTable.expected(.queueItem, .noRoute))
    }
}
