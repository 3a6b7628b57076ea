import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Split items in a `DownloadQueue` over real sockets: the per-host cap counts every connection
/// a split item holds (Docs/DownloadQueue.md, "Split items and the per-host cap").
final class DownloadQueueSplitTests: CourierTestCase {
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }
    private func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    /// One request the server held: its path, and when it came and was answered.
    private struct Held: Sendable {
        let path: String
        let start: Double
        var end: Double?
    }

    func testTwoSplitItemsOnOneHostNeverHoldMoreConnectionsThanItsCap() throws {
        // Given a server that holds each request 300 ms before answering, counting the requests
        // it holds at once (the test server has no such counter yet), and a queue allowing 4
        // connections per host
        let body = TestServer.deterministicBytes(count: 4096, seed: 24)
        let held = Locked<[Held]>([])
        let inFlight = Locked((now: 0, peak: 0))
        let clock: @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        let scripted = try ScriptedServer { request, _ in
            let index = held.withLock { list in
                list.append(Held(path: request.path, start: clock()))
                return list.count - 1
            }
            inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            usleep(300_000)
            inFlight.withLock { $0.now -= 1 }
            held.withLock { $0[index].end = clock() }
            return .response(
                status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"v1\"")], body: body)
        }
        defer { scripted.stop() }
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 4
        configuration.maximumRunningPerHost = 4
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        // The connections the queue holds on the host, after every change.
        let host = DownloadQueue.Item.hostKey(of: scripted.url("/a"))
        let heldByQueue = Locked(0)
        queue.addObserver { [weak queue] _ in
            guard let queue else { return }
            let now = queue.state.withLock { $0.connectionsPerHost[host] ?? 0 }
            heldByQueue.withLock { $0 = max($0, now) }
        }

        // When two items that ask for 4 connections each are added
        try queue.add(contentsOf: ["a", "b"].map { name in
            DownloadQueue.NewItem(url: scripted.url("/\(name)"), to: file(name), id: name, split: .connections(4))
        })
        waitUntil("both items finished", timeout: 20) { queue.items.allSatisfy { $0.state.isFinished } }

        // Then both are complete, the first held the host's 4 connections and the second waited
        // for them: no request of the second came while one of the first was held, and the
        // server never held more than 4 at once
        for name in ["a", "b"] {
            XCTAssertEqual(queue.item(name)?.state, .completed(file(name)), name)
            XCTAssertEqual(try? Data(contentsOf: file(name)), body, name)
        }
        XCTAssertEqual(heldByQueue.withLock { $0 }, 4, "the queue granted the first item all 4 and never more")
        XCTAssertLessThanOrEqual(inFlight.withLock { $0.peak }, 4)
        let requests = held.withLock { $0 }
        let first = requests.filter { $0.path == "/a" }
        let second = requests.filter { $0.path == "/b" }
        XCTAssertFalse(first.isEmpty)
        XCTAssertFalse(second.isEmpty)
        let firstEnded = first.compactMap(\.end).max() ?? .infinity
        let secondStarted = second.map(\.start).min() ?? -.infinity
        XCTAssertGreaterThanOrEqual(secondStarted, firstEnded, "the second item started while the first held every connection")
        XCTAssertEqual(queue.state.withLock { $0.connectionsPerHost }, [:], "every connection was released")
        let stopped = expectation(description: "stopped")
        Task {
            await queue.stop()
            stopped.fulfill()
        }
        wait(for: [stopped], timeout: 10)
    }
}
