import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Split items in a `DownloadQueue` over real sockets: the per-host cap counts every connection
/// a split item holds (Docs/DownloadQueue.md, "Split items and the per-host cap").
final class DownloadQueueSplitTests: CourierTestCase {
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }
    private func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }
    /// The most connections each download (by its URL's path) was seen using, from the monitors.
    private let mostConnections = Locked<[String: Int]>([:])

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let most = mostConnections
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { task, event in
                guard case .connections(let crew) = event, let path = task.originalRequest.url?.path else { return }
                most.withLock { $0[path] = max($0[path] ?? 0, crew.connections.count) }
            })
        ]
        return configuration
    }

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
            inFlight.withLock {
                $0.now += 1; $0.peak = max($0.peak, $0.now)
            }
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
        try queue.add(
            contentsOf: ["a", "b"].map { name in
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

    func testASplitItemGetsOnlyTheConnectionsLeftFreeOnItsHost() throws {
        // Given two 8 MiB files served with ranges in paced writes (so connections overlap), and
        // a queue allowing 4 connections per host
        let size = 8 << 20
        for (name, seed) in [("a.bin", UInt64(1)), ("b.bin", 2)] {
            server.addFile(name, data: TestServer.deterministicBytes(count: size, seed: seed), etag: "\"\(name)\"")
        }
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 4
        configuration.maximumRunningPerHost = 4
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)

        // When an item split 3 and then one split 4 are added together
        try queue.add(contentsOf: [
            DownloadQueue.NewItem(
                url: server.url("/files/a.bin?chunk=65536&chunk_delay_ms=5"), to: file("a.bin"), id: "a", split: .connections(3)),
            DownloadQueue.NewItem(
                url: server.url("/files/b.bin?chunk=65536&chunk_delay_ms=5"), to: file("b.bin"), id: "b", split: .connections(4)),
        ])
        waitUntil("both items finished", timeout: 60) { queue.items.allSatisfy { $0.state.isFinished } }

        // Then both files are exact; the first split over at most its 3, and the second, started
        // beside it with one connection free, never split: 4 connections at most on the host
        for (name, seed) in [("a", UInt64(1)), ("b", 2)] {
            XCTAssertEqual(queue.item(name)?.state, .completed(file("\(name).bin")), name)
            XCTAssertEqual(try? Data(contentsOf: file("\(name).bin")), TestServer.deterministicBytes(count: size, seed: seed), name)
        }
        let most = mostConnections.withLock { $0 }
        XCTAssertGreaterThan(most["/files/a.bin"] ?? 0, 1, "the first item split: \(most)")
        XCTAssertLessThanOrEqual(most["/files/a.bin"] ?? 0, 3, "\(most)")
        XCTAssertLessThanOrEqual(most["/files/b.bin"] ?? 1, 1, "the second item used more than the one connection left: \(most)")
        let stopped = expectation(description: "stopped")
        Task {
            await queue.stop()
            stopped.fulfill()
        }
        wait(for: [stopped], timeout: 10)
    }

    /// Runs `queue` until every item finished, then stops it.
    private func finish(_ queue: DownloadQueue, timeout: TimeInterval = 60) {
        waitUntil("every item finished", timeout: timeout) { queue.items.allSatisfy { $0.state.isFinished } }
        let stopped = expectation(description: "stopped")
        Task {
            await queue.stop()
            stopped.fulfill()
        }
        wait(for: [stopped], timeout: 10)
    }

    func testTwentySplitItemsOnTwoHostsNeverHaveMoreConnectionsOpenThanTheCap() throws {
        try twentySplitItemsStayUnderTheCap(size: 2 << 20)
    }

    func testTwentySplitItemsLargeEnoughToBeSplitAgainNeverHaveMoreConnectionsOpenThanTheCap() throws {
        // 6 MiB: a connection that finishes its range takes a tail from another, and the end
        // game races the last ones, so ranges are handed from one connection to another. Before,
        // the replacement started before the connection it replaced had ended: 7 open of 6.
        try twentySplitItemsStayUnderTheCap(size: 6 << 20)
    }

    private func twentySplitItemsStayUnderTheCap(size: Int) throws {
        // Given two hosts serving files of `size` in paced writes (so connections overlap), a
        // manager and a queue allowing 6 connections per host
        let other = try TestServer()
        defer { other.stop() }
        let hosts = [server!, other]
        for (hostIndex, host) in hosts.enumerated() {
            for index in 0..<10 {
                host.addFile("f\(index).bin", data: TestServer.deterministicBytes(count: size, seed: UInt64(hostIndex * 10 + index)))
            }
        }
        var managerConfiguration = makeConfiguration()
        managerConfiguration.maximumRunningTasksPerHost = 6
        let manager = SessionManager(configuration: managerConfiguration)
        defer { manager.invalidate(cancelingTasks: true) }
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 12
        configuration.maximumRunningPerHost = 6
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)

        // When 20 split items are added, 10 per host, asking for 1 to 6 connections (so the
        // grants change from one item to the next)
        let splits = [6, 2, 4, 1, 3, 6, 1, 5, 2, 4]
        try queue.add(
            contentsOf: hosts.enumerated().flatMap { hostIndex, host in
                (0..<10).map { index in
                    DownloadQueue.NewItem(
                        url: host.url("/files/f\(index).bin?chunk=65536&chunk_delay_ms=4"), to: file("h\(hostIndex)-\(index).bin"),
                        id: "h\(hostIndex)-\(index)", split: splits[index] == 1 ? .off : .connections(splits[index]))
                }
            })
        finish(queue)

        // Then every file is exact, and neither server ever had more than 6 TCP connections open
        // from the client (idle keep-alive ones counted, as a server limiting connections counts)
        for (hostIndex, _) in hosts.enumerated() {
            for index in 0..<10 {
                let id = "h\(hostIndex)-\(index)"
                XCTAssertEqual(queue.item(id)?.state, .completed(file("\(id).bin")), id)
                XCTAssertEqual(
                    try? Data(contentsOf: file("\(id).bin")),
                    TestServer.deterministicBytes(count: size, seed: UInt64(hostIndex * 10 + index)), id)
            }
        }
        for (hostIndex, host) in hosts.enumerated() {
            XCTAssertLessThanOrEqual(host.peakOpenConnections, 6, "host \(hostIndex): \(host.connectionCount) accepted in all")
            XCTAssertLessThanOrEqual(host.peakResponsesInFlight, 6, "host \(hostIndex): responses in flight at once")
            print(
                "twenty split items of \(size >> 20) MiB: host \(hostIndex) peak open \(host.peakOpenConnections) of 6, responses in flight \(host.peakResponsesInFlight), per item \((0..<10).map { host.traffic(for: "/files/f\($0).bin").peakInFlight })"
            )
        }
    }

    func testASplitItemsConnectionsCloseWhenItEndsSoTheNextItemsStayUnderTheCap() throws {
        // Given a queue allowing 4 connections per host, and an item split 4 that has completed
        let size = 4 << 20
        server.addFile("split.bin", data: TestServer.deterministicBytes(count: size, seed: 7))
        for index in 0..<4 {
            server.addFile("single\(index).bin", data: TestServer.deterministicBytes(count: 1 << 20, seed: UInt64(index)))
        }
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 4
        configuration.maximumRunningPerHost = 4
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        try queue.add(
            DownloadQueue.NewItem(
                url: server.url("/files/split.bin?chunk=65536&chunk_delay_ms=5"), to: file("split.bin"), id: "split",
                split: .connections(4)))
        waitUntil("the split item finished", timeout: 30) { queue.item("split")?.state.isFinished == true }
        XCTAssertEqual(mostConnections.withLock { $0["/files/split.bin"] }, 4, "the item used its 4 connections")
        // Its connections close at once, as the server counts (a loaded machine's server thread may
        // notice a client's close a moment later): at most the manager's own session keeps one,
        // idle, for the next request to reuse. Before, three lane connections stayed open for the
        // manager's life.
        waitUntil("the split item's connections closed", timeout: 5) { server.openConnectionCount <= 1 }
        server.resetPeakOpenConnections()

        // When four single items then run side by side
        try queue.add(
            contentsOf: (0..<4).map { index in
                DownloadQueue.NewItem(
                    url: server.url("/files/single\(index).bin?chunk=65536&chunk_delay_ms=10"), to: file("single\(index).bin"),
                    id: "single\(index)")
            })
        finish(queue)

        // Then the server never had more than 4 connections open: the split item's further
        // connections did not stay open, idle, beside the four new ones
        XCTAssertEqual(queue.item("split")?.state, .completed(file("split.bin")))
        for index in 0..<4 { XCTAssertEqual(queue.item("single\(index)")?.state, .completed(file("single\(index).bin"))) }
        XCTAssertLessThanOrEqual(server.peakOpenConnections, 4, "\(server.connectionCount) accepted in all")
    }
}
