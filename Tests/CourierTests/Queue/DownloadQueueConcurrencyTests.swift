import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Many callers at once on one queue (also under ThreadSanitizer in CI).
final class DownloadQueueConcurrencyTests: CourierTestCase {
    func testConcurrentAddsPausesResumesAndCancelsLeaveAConsistentQueue() async throws {
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 6
        configuration.maximumRunningPerHost = 6
        let queueDirectory = directory.appendingPathComponent("queue")
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        let server = server!
        let out = directory.appendingPathComponent("out")
        let finals = Locked([String: DownloadQueue.State]())
        queue.addObserver { change in finals.withLock { $0[change.id] = change.state } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<15 {
                        let id = "w\(worker)-\(index)"
                        // An item paused or cancelled right after it is added is served slowly, so
                        // that a worker descheduled between the two calls cannot see it complete first.
                        let delay = index % 5 == 1 || index % 5 == 3 ? 200 : 1
                        try queue.add(
                            .init(
                                url: server.url("/bytes/20000?seed=\(index)&chunk=4096&chunk_delay_ms=\(delay)"),
                                to: out.appendingPathComponent(id), id: id))
                        switch index % 5 {
                        case 1: try queue.pause(id)
                        case 2:
                            try queue.pause(id)
                            try queue.resume(id)
                        case 3: try queue.cancel(id)
                        default: break
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        waitUntil("every item settled", timeout: 30) {
            queue.items.allSatisfy { item in
                switch item.state {
                case .completed, .paused, .cancelled: return true
                default: return false
                }
            }
        }
        XCTAssertEqual(queue.items.count, 120)
        for item in queue.items {
            let index = Int(item.id.split(separator: "-")[1])!
            switch index % 5 {
            case 1: XCTAssertEqual(item.state, .paused, item.id)
            case 3: XCTAssertEqual(item.state, .cancelled, item.id)
            default:
                XCTAssertEqual(item.state, .completed(out.appendingPathComponent(item.id)), item.id)
                XCTAssertEqual(
                    try Data(contentsOf: out.appendingPathComponent(item.id)),
                    TestServer.deterministicBytes(count: 20_000, seed: UInt64(index)))
            }
        }
        await queue.stop()
        // The observer saw each item's last state.
        waitUntil("the observer caught up", timeout: 5) { finals.withLock { $0.count } == 120 }
        XCTAssertEqual(finals.withLock { $0.values.filter { $0.isFinished || $0 == .paused }.count }, 120)
        XCTAssertEqual(manager.runningTaskCount, 0)
    }
}
