import Foundation
import XCTest

/// The network monitor, waiting requests and the offline queue against a real kernel: each test
/// makes its own network namespace, runs `courier-test-hooks` inside it, changes links,
/// addresses and routes from outside with `ip -n`, and reads the child's lines. Every wait is
/// bounded; the namespace (with its veths) is removed in tearDown. Skipped without root.
final class NetworkNamespaceTests: XCTestCase {
    private var namespace: NetworkNamespace!

    override func setUpWithError() throws {
        try super.setUpWithError()
        namespace = try NetworkNamespace()
    }

    override func tearDownWithError() throws {
        if let namespace {
            namespace.remove()
            XCTAssertFalse(namespace.exists, "the namespace \(namespace.name) was left behind")
        }
        namespace = nil
        try super.tearDownWithError()
    }

    /// A veth pair inside the namespace, both ends up, the first with `10.77.0.1/24` when asked.
    private func addVeth(address: Bool) {
        namespace.ip("link", "add", "courier-test-a", "type", "veth", "peer", "name", "courier-test-b")
        namespace.ip("link", "set", "courier-test-a", "up")
        namespace.ip("link", "set", "courier-test-b", "up")
        if address { namespace.ip("addr", "add", "10.77.0.1/24", "dev", "courier-test-a") }
    }

    func testTheMonitorSeesLoopbackGoDownAndComeUp() throws {
        // Given a monitor in a fresh namespace, where lo starts down
        let child = try namespace.spawn(["network-monitor"])
        let ready = try XCTUnwrap(child.waitForLine { $0.hasPrefix("ready") }, "the monitor never started: \(child.allLines)")
        XCTAssertEqual(ready.line, "ready monitoring")
        XCTAssertTrue(child.allLines.contains { $0.contains("lo:loopback:down") }, "\(child.allLines)")

        // When lo comes up
        namespace.ip("link", "set", "lo", "up")

        // Then the path shows it up with its address, and the status stays unsatisfied (no way out)
        let up = try XCTUnwrap(
            child.waitForLine(from: ready.index) { $0.contains("lo:loopback:up:carrier:127.0.0.1/8") }, "\(child.allLines)")
        XCTAssertTrue(up.line.hasPrefix("path unsatisfied"), up.line)

        // When it goes down again, Then the monitor says so
        namespace.ip("link", "set", "lo", "down")
        XCTAssertNotNil(child.waitForLine(from: up.index + 1) { $0.contains("lo:loopback:down") }, "\(child.allLines)")
    }

    func testAVethsAddressAndDefaultRouteComingAndGoingChangeThePath() throws {
        // Given a monitor watching a namespace with a veth pair and no address
        let child = try namespace.spawn(["network-monitor"])
        XCTAssertNotNil(child.waitForLine { $0.hasPrefix("ready") })
        addVeth(address: false)
        var seen = try XCTUnwrap(child.waitForLine { $0.contains("courier-test-a:virtual:up:carrier") }, "\(child.allLines)")

        // When the address is added, Then the path lists it
        namespace.ip("addr", "add", "10.77.0.1/24", "dev", "courier-test-a")
        seen = try XCTUnwrap(
            child.waitForLine(from: seen.index) { $0.contains("courier-test-a:virtual:up:carrier:10.77.0.1/24") }, "\(child.allLines)")
        XCTAssertTrue(seen.line.hasPrefix("path unsatisfied"), seen.line)

        // When a default route through the peer is added, Then the path is satisfied over the veth
        namespace.ip("route", "add", "default", "via", "10.77.0.2", "dev", "courier-test-a")
        seen = try XCTUnwrap(
            child.waitForLine(from: seen.index) { $0.hasPrefix("path satisfied in-use=courier-test-a ") }, "\(child.allLines)")

        // When the route is removed, Then it is unsatisfied again
        namespace.ip("route", "del", "default")
        seen = try XCTUnwrap(child.waitForLine(from: seen.index) { $0.hasPrefix("path unsatisfied") }, "\(child.allLines)")

        // When the address is removed, Then the interface has none
        namespace.ip("addr", "del", "10.77.0.1/24", "dev", "courier-test-a")
        XCTAssertNotNil(
            child.waitForLine(from: seen.index + 1) {
                $0.contains("courier-test-a:virtual:up:carrier:fe80") || $0.contains("courier-test-a:virtual:up:carrier:,")
                    || $0.hasSuffix("courier-test-a:virtual:up:carrier:")
            }, "\(child.allLines)")
    }

    func testThePerHostAnswerFlipsAsRoutesChange() throws {
        // Given a monitor asked about a host on the veth's subnet and a host beyond it
        let child = try namespace.spawn(["network-monitor", "10.77.0.2", "198.51.100.7"])
        XCTAssertNotNil(child.waitForLine { $0.hasPrefix("ready") })
        XCTAssertNotNil(child.waitForLine { $0 == "host 10.77.0.2 unreachable" })
        XCTAssertNotNil(child.waitForLine { $0 == "host 198.51.100.7 unreachable" })
        addVeth(address: false)

        // When the veth gets its address, Then the subnet's host is reachable and the far one is not
        namespace.ip("addr", "add", "10.77.0.1/24", "dev", "courier-test-a")
        let near = try XCTUnwrap(child.waitForLine { $0 == "host 10.77.0.2 reachable" }, "\(child.allLines)")
        XCTAssertFalse(child.allLines.contains("host 198.51.100.7 reachable"))

        // When a default route appears, Then the far host is reachable
        namespace.ip("route", "add", "default", "via", "10.77.0.2", "dev", "courier-test-a")
        let far = try XCTUnwrap(child.waitForLine(from: near.index) { $0 == "host 198.51.100.7 reachable" }, "\(child.allLines)")

        // When it goes, Then the far host is unreachable again, the near one still reachable
        namespace.ip("route", "del", "default")
        XCTAssertNotNil(child.waitForLine(from: far.index) { $0 == "host 198.51.100.7 unreachable" }, "\(child.allLines)")
        XCTAssertFalse(child.allLines[far.index...].contains("host 10.77.0.2 unreachable"))
    }

    func testTheMonitorCostsNothingWhileNothingChanges() throws {
        // Given a started monitor that has settled
        let child = try namespace.spawn(["network-monitor"])
        XCTAssertNotNil(child.waitForLine { $0.hasPrefix("ready") })
        Thread.sleep(forTimeInterval: 0.5)
        child.send("stat")
        let before = try XCTUnwrap(child.waitForLine { $0.hasPrefix("refreshes") })

        // When nothing changes for 3 s
        Thread.sleep(forTimeInterval: 3)
        child.send("stat")
        let after = try XCTUnwrap(child.waitForLine(from: before.index + 1) { $0.hasPrefix("refreshes") })

        // Then it read the tables no more and used no measurable CPU (clock ticks of 10 ms)
        let parse = { (line: String) -> (Int, Int) in
            let words = line.split(separator: " ")
            return (Int(words[1]) ?? -1, Int(words[3]) ?? -1)
        }
        let (refreshesBefore, ticksBefore) = parse(before.line)
        let (refreshesAfter, ticksAfter) = parse(after.line)
        XCTAssertEqual(refreshesAfter, refreshesBefore, "the monitor re-read the tables with nothing changing")
        XCTAssertLessThanOrEqual(ticksAfter - ticksBefore, 1, "idle CPU: \(before.line) → \(after.line)")
    }

    func testARequestWaitsForARouteAndThenCompletes() throws {
        // Given a server in a namespace whose lo is down, and a request that waits up to 20 s
        let child = try namespace.spawn(["network-fetch", "20", "/bytes/2048"])
        XCTAssertNotNil(child.waitForLine { $0.hasPrefix("server") }, "\(child.allLines)")

        // When the request finds no route, Then it waits, and says so
        let waiting = try XCTUnwrap(child.waitForLine { $0 == "event pause connectivity" }, "\(child.allLines)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(child.allLines.contains { $0.hasPrefix("completed") || $0.hasPrefix("failed") })

        // When lo comes up, Then it resumes and completes, with the wait in its timeline and no retry
        namespace.ip("link", "set", "lo", "up")
        XCTAssertNotNil(child.waitForLine(from: waiting.index) { $0 == "event pause-ended connectivity" }, "\(child.allLines)")
        let done = try XCTUnwrap(child.waitForLine(from: waiting.index) { $0.hasPrefix("completed") || $0.hasPrefix("failed") })
        XCTAssertEqual(done.line, "completed 200 2048 pauses=connectivity retries=0 requests=1")
    }

    func testARequestThatWaitsInVainFailsNamingTheNetwork() throws {
        // Given a request that waits up to 0.5 s, in a namespace with no route at all
        let child = try namespace.spawn(["network-fetch", "0.5", "/bytes/10"])

        // When the time is up, Then it fails with networkUnreachable, naming the network and the wait
        let done = try XCTUnwrap(child.waitForLine { $0.hasPrefix("completed") || $0.hasPrefix("failed") }, "\(child.allLines)")
        XCTAssertTrue(done.line.hasPrefix("failed networkUnreachable the network is unreachable"), done.line)
        XCTAssertTrue(done.line.contains("waited 500 ms") || done.line.contains("waited 0.5 s"), done.line)
    }

    func testWithoutWaitingARequestToAHostWithNoRouteFailsAtOnceNamingTheNetwork() throws {
        // Given a manager that does not wait, in a namespace with no route
        let child = try namespace.spawn(["network-fetch", "none", "/bytes/10"])

        // When it requests, Then it fails at once with networkUnreachable (not connectionRefused)
        let done = try XCTUnwrap(child.waitForLine(timeout: 5) { $0.hasPrefix("completed") || $0.hasPrefix("failed") }, "\(child.allLines)")
        XCTAssertTrue(done.line.hasPrefix("failed networkUnreachable the network is unreachable"), done.line)
    }

    func testTheQueueHoldsAnItemWhileOfflineAndRunsItWhenTheRouteReturns() throws {
        // Given a queue in a namespace whose lo is down, with one item for a server inside
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try namespace.spawn(["network-queue", directory.path, "200000"])
        XCTAssertNotNil(child.waitForLine { $0 == "added" }, "\(child.allLines)")

        // When a while passes offline, Then the item is still queued: not started, not failed
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(child.allLines.filter { $0.hasPrefix("item") }, ["item queued"])

        // When lo comes up, Then the item runs and completes with one request and no retry
        namespace.ip("link", "set", "lo", "up")
        let done = try XCTUnwrap(child.waitForLine(timeout: 15) { $0.hasPrefix("done") }, "\(child.allLines)")
        XCTAssertEqual(child.allLines.filter { $0.hasPrefix("item") }, ["item queued", "item running", "item completed"])
        XCTAssertEqual(done.line, "done requests=1 ranges=0 size=200000")
    }
}

extension NetworkNamespaceTests {
    func testADownloadCutByALinkLossContinuesByRangeWhenTheLinkReturns() throws {
        // Given a queue downloading slowly (2 s) from a server in the namespace, lo up
        namespace.ip("link", "set", "lo", "up")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try namespace.spawn(["network-queue", directory.path, "200000", "slow"])
        let running = try XCTUnwrap(child.waitForLine { $0 == "item running" }, "\(child.allLines)")

        // When lo goes down mid-transfer, Then the item goes back to the queue (its bytes kept), not failed
        namespace.ip("link", "set", "lo", "down")
        let requeued = try XCTUnwrap(
            child.waitForLine(from: running.index, timeout: 15) { $0.hasPrefix("item queued") || $0.hasPrefix("item failed") },
            "\(child.allLines)")
        XCTAssertEqual(requeued.line, "item queued")

        // When lo comes back, Then the download continues with Range and the file is whole
        namespace.ip("link", "set", "lo", "up")
        let done = try XCTUnwrap(child.waitForLine(from: requeued.index, timeout: 15) { $0.hasPrefix("done") }, "\(child.allLines)")
        XCTAssertEqual(child.allLines.filter { $0.hasPrefix("item") }, ["item queued", "item running", "item queued", "item completed"])
        XCTAssertEqual(done.line, "done requests=2 ranges=1 size=200000")
    }
}

/// `courier get` run as people run it, inside the namespace.
extension NetworkNamespaceTests {
    func testCourierGetWithNoRouteFailsAtOnceWithExitThreeNamingTheNetwork() throws {
        // Given a namespace whose lo is down
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString).bin")
        defer { unlink(output.path) }

        // When courier gets a URL there
        let child = try namespace.spawn(["get", "http://127.0.0.1:9/bytes/10", "-o", output.path], executable: NetworkNamespace.courier)
        let status = child.waitForExit(timeout: 10)

        // Then it fails at once with exit 3, saying the network is the problem, and saves nothing
        XCTAssertEqual(status, 3, "\(child.allLines)")
        XCTAssertTrue(
            child.allLines.contains { $0.contains("the network is unreachable") && $0.contains("--wait-for-network") }, "\(child.allLines)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testCourierGetWaitsForTheNetworkWhenAskedAndThenDownloads() throws {
        // Given a server in the namespace, then its lo set down (127.0.0.1 stays, with no way to it)
        namespace.ip("link", "set", "lo", "up")
        let server = try namespace.spawn(["serve"], executable: NetworkNamespace.courier)
        defer { server.signal(SIGTERM) }
        let listening = try XCTUnwrap(server.waitForLine { $0.contains("listening on http://127.0.0.1:") }, "\(server.allLines)")
        let base = String(listening.line.split(separator: " ").first { $0.hasPrefix("http://") } ?? "")
        namespace.ip("link", "set", "lo", "down")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString).bin")
        defer { unlink(output.path) }

        // When courier gets with --wait-for-network 20
        let child = try namespace.spawn(
            ["get", "\(base)/bytes/4096", "-o", output.path, "--wait-for-network", "20"], executable: NetworkNamespace.courier)

        // Then it says it waits; When lo comes up, Then it says the network is back and downloads the file
        XCTAssertNotNil(
            child.waitForLine { $0.contains("the network is unreachable (no route to 127.0.0.1); waiting up to 20 s") }, "\(child.allLines)"
        )
        namespace.ip("link", "set", "lo", "up")
        XCTAssertEqual(child.waitForExit(timeout: 15), 0, "\(child.allLines)")
        XCTAssertTrue(child.allLines.contains { $0.contains("the network is back") }, "\(child.allLines)")
        XCTAssertEqual((try? Data(contentsOf: output))?.count, 4096)
    }
}

/// An event stream whose route goes away (issue 31, item 3): it waits for the route and
/// reconnects with `Last-Event-ID`, instead of ending with `networkUnreachable`.
extension NetworkNamespaceTests {
    /// Follows the stream until event 5, sets lo down for `outage` seconds, and returns the
    /// child's lines once the stream ended (every event once, in order, is asserted here).
    /// `resumesWithin`: the longest time from lo coming back to the next event.
    private func followEventsThroughAnOutage(wait: String, outage: TimeInterval, resumesWithin: TimeInterval) throws -> [String] {
        namespace.ip("link", "set", "lo", "up")
        let child = try namespace.spawn(["network-events", wait])
        let fifth = try XCTUnwrap(child.waitForLine { $0 == "event 5" }, "\(child.allLines)")

        // When lo goes down mid-stream, Then the silence ends the connection and the stream reconnects, not fails
        namespace.ip("link", "set", "lo", "down")
        let reconnect = try XCTUnwrap(
            child.waitForLine(from: fifth.index) { $0.hasPrefix("reconnect") || $0.hasPrefix("failed") }, "\(child.allLines)")
        XCTAssertTrue(reconnect.line.hasPrefix("reconnect 1 networkUnreachable last-id="), reconnect.line)

        // When lo comes back, Then the stream continues after the last event it delivered
        Thread.sleep(forTimeInterval: outage)
        namespace.ip("link", "set", "lo", "up")
        let back = Date()
        let sixth = try XCTUnwrap(child.waitForLine(from: reconnect.index, timeout: 20) { $0 == "event 6" }, "\(child.allLines)")
        XCTAssertLessThan(Date().timeIntervalSince(back), resumesWithin, "the stream resumed late after the route came back")
        let done = try XCTUnwrap(
            child.waitForLine(from: sixth.index, timeout: 20) { $0.hasPrefix("completed") || $0.hasPrefix("failed") },
            "\(child.allLines)")
        XCTAssertTrue(done.line.hasPrefix("completed ids=\((1...30).map(String.init).joined(separator: ",")) "), done.line)
        let lastID = String(reconnect.line.split(separator: "=").last ?? "")
        // The last request is the reconnection after event 30, answered 204.
        XCTAssertTrue(
            done.line.hasSuffix("last-event-ids=-,\(lastID),30"), "one reconnection for the outage, resuming after \(lastID): \(done.line)")
        return child.allLines
    }

    func testAnEventStreamWhoseRouteGoesAwayWaitsForItAndResumesWithLastEventID() throws {
        // Given an event stream in a namespace, with no waitsForConnectivity, when lo is down for 0.5 s
        // Then it resumes when the route is back, well before the 3 s reconnection delay would have ended
        let lines = try followEventsThroughAnOutage(wait: "none", outage: 0.5, resumesWithin: 1.5)

        // And the stream's own wait for the route did it (the task had no wait of its own)
        XCTAssertFalse(lines.contains("event pause connectivity"), "\(lines)")
    }

    func testWithWaitsForConnectivityAReconnectionOutlastingItsDelayWaitsForTheRoute() throws {
        // Given an event stream with waitsForConnectivity 20 s, when lo is down for longer than the 3 s reconnection delay
        let lines = try followEventsThroughAnOutage(wait: "20", outage: 5, resumesWithin: 2)

        // Then the reconnection's task waited for the route (a connectivity pause), not failed
        XCTAssertTrue(lines.contains("event pause connectivity"), "\(lines)")
        XCTAssertTrue(lines.contains("event pause-ended connectivity"), "\(lines)")
    }
}
