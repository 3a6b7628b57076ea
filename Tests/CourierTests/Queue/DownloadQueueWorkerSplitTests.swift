import CourierSupport
import CourierTestServer
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Split items fetched by ``DownloadQueueWorker``s over real sockets: each lease holds the
/// connections its store granted (the one-process queue's rule, counted over every worker), the
/// download uses exactly those, and the server never sees more than the per-host cap
/// (Docs/DownloadQueue.md, "A fleet").
final class DownloadQueueWorkerSplitTests: CourierTestCase {
    /// The most connections each download (by its URL's path) was seen using, from the monitors.
    private let mostConnections = Locked<[String: Int]>([:])

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        // The manager must not hold back what the queue's cap allows (as `courier get -i` sets it).
        configuration.maximumRunningTasksPerHost = 6
        let most = mostConnections
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { task, event in
                guard case .connections(let crew) = event, let path = task.originalRequest.url?.path else { return }
                most.withLock { $0[path] = max($0[path] ?? 0, crew.connections.count) }
            })
        ]
        return configuration
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    private func makeWorker(
        _ name: String, store: JournalQueueStore, perHost: Int, running: Int
    ) throws -> DownloadQueueWorker {
        var configuration = DownloadQueueWorker.Configuration()
        configuration.name = name
        configuration.pollInterval = 0.05
        configuration.maximumRunning = running
        configuration.maximumRunningPerHost = perHost
        return try DownloadQueueWorker(
            store: store, directory: directory.appendingPathComponent("worker-\(name)"), manager: manager, configuration: configuration)
    }

    private func finished(_ store: JournalQueueStore) -> Bool {
        ((try? store.items()) ?? []).allSatisfy(\.state.isFinished)
    }

    func testALeasesDownloadUsesExactlyTheConnectionsItsStoreGranted() async throws {
        // Given two 8 MiB files served with ranges in paced writes (so connections overlap), a cap
        // of 4 connections per host, and one worker running two items at once
        let size = 8 << 20
        for (name, seed) in [("a.bin", UInt64(1)), ("b.bin", 2)] {
            server.addFile(name, data: TestServer.deterministicBytes(count: size, seed: seed), etag: "\"\(name)\"")
        }
        let store = try JournalQueueStore(directory: directory.appendingPathComponent("store"))
        try store.add([
            DownloadQueue.NewItem(
                url: server.url("/files/a.bin?chunk=65536&chunk_delay_ms=5"), to: file("a.bin"), id: "a", split: .connections(3)),
            DownloadQueue.NewItem(
                url: server.url("/files/b.bin?chunk=65536&chunk_delay_ms=5"), to: file("b.bin"), id: "b", split: .connections(4)),
        ])
        let worker = try makeWorker("A", store: store, perHost: 4, running: 2)

        // When the worker leases both (the first is granted its 3, the second the one left)
        worker.start()
        waitUntil("both items finished", timeout: 60) { finished(store) }
        await worker.stop()

        // Then both files are exact, the first download used its 3 connections and the second one
        // (the client's count: at the server, a connection whose range was cut short is still
        // being written to for a moment after its successor starts — see the test below for the
        // server's count, and Docs/DownloadQueue.md)
        for (name, seed) in [("a", UInt64(1)), ("b", 2)] {
            XCTAssertEqual(try store.items().first { $0.id == name }?.state, .completed(file("\(name).bin")), name)
            XCTAssertEqual(try? Data(contentsOf: file("\(name).bin")), TestServer.deterministicBytes(count: size, seed: seed), name)
        }
        let most = mostConnections.withLock { $0 }
        XCTAssertEqual(most["/files/a.bin"], 3, "the first lease's download split over its 3: \(most)")
        XCTAssertLessThanOrEqual(most["/files/b.bin"] ?? 1, 1, "the second used more than the one connection granted: \(most)")
        XCTAssertEqual(server.traffic(for: "/files/b.bin").peakInFlight, 1, "the second item's responses at the server")
    }

    func testTwoWorkersOnSplitItemsNeverHaveMoreConnectionsOpenThanTheCap() async throws {
        // Given 12 files of 2 MiB on one host, paced, split 1 to 6, and two workers sharing a cap
        // of 6 connections on the host (each could run 4 items)
        // 2 MiB, as the one-process queue's test: with larger files a range handed from one
        // connection to another is still being written to when its successor opens, and the
        // server sees one more for a moment (Docs/DownloadQueue.md, "Not yet").
        let size = 2 << 20
        let splits = [6, 2, 4, 1, 3, 6, 1, 5, 2, 4, 3, 6]
        for index in splits.indices {
            server.addFile("f\(index).bin", data: TestServer.deterministicBytes(count: size, seed: UInt64(index)), etag: "\"f\(index)\"")
        }
        let store = try JournalQueueStore(directory: directory.appendingPathComponent("store"))
        try store.add(
            splits.enumerated().map { index, split in
                DownloadQueue.NewItem(
                    url: server.url("/files/f\(index).bin?chunk=65536&chunk_delay_ms=4"), to: file("f\(index).bin"), id: "f\(index)",
                    split: split == 1 ? .off : .connections(split))
            })
        let workers = [
            try makeWorker("A", store: store, perHost: 6, running: 4), try makeWorker("B", store: store, perHost: 6, running: 4),
        ]

        // When both run to the end
        for worker in workers { worker.start() }
        waitUntil("every item finished", timeout: 90) { finished(store) }
        for worker in workers { await worker.stop() }

        // Then every file is exact, split items did split, and the server never had more than 6
        // TCP connections open (idle keep-alive ones counted, as a server limiting connections counts)
        for index in splits.indices {
            XCTAssertEqual(try store.items().first { $0.id == "f\(index)" }?.state, .completed(file("f\(index).bin")), "f\(index)")
            XCTAssertEqual(
                try? Data(contentsOf: file("f\(index).bin")), TestServer.deterministicBytes(count: size, seed: UInt64(index)), "f\(index)")
        }
        let most = mostConnections.withLock { $0 }
        XCTAssertGreaterThan(most.values.max() ?? 0, 1, "no download split: \(most)")
        for (index, split) in splits.enumerated() {
            XCTAssertLessThanOrEqual(most["/files/f\(index).bin"] ?? 1, split, "f\(index) used more than its split: \(most)")
        }
        XCTAssertLessThanOrEqual(server.peakOpenConnections, 6, "\(server.connectionCount) accepted in all")
        print("fleet split: peak open \(server.peakOpenConnections) of 6, \(server.connectionCount) accepted, most per item \(most)")
    }
}
