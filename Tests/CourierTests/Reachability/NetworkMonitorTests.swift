import CourierTestSupport
import XCTest
@testable import Courier

/// The monitor in the test's own namespace, where nothing is changed: what it reports, and how it
/// behaves when netlink is not available to the process.
final class NetworkMonitorTests: XCTestCase {
    func testAProcessWithoutNetlinkStillWorksAndSaysWhy() {
        // Given a monitor whose sockets cannot be opened (as in a sandbox that forbids netlink)
        struct Refused: Error, CustomStringConvertible { var description: String { "socket(AF_NETLINK): Permission denied" } }
        let monitor = NetworkMonitor(debounce: .milliseconds(10)) { throw Refused() }

        // When it starts
        monitor.start()

        // Then the status is unknown with the reason, and hosts are still answered by route lookups
        XCTAssertEqual(monitor.currentPath.status, .unknown)
        XCTAssertFalse(monitor.isMonitoring)
        XCTAssertTrue(monitor.currentPath.unknownReason?.contains("Permission denied") == true, "\(monitor.currentPath)")
        XCTAssertTrue(monitor.reachability(of: "127.0.0.1").isReachable)

        // And a wait for a route is not held (nothing could end it): it lets the request go
        let outcome = Box<NetworkMonitor.RouteWait>()
        let done = expectation(description: "wait")
        monitor.waitForRoute(to: "198.18.0.1", timeout: .seconds(30)) {
            outcome.append($0); done.fulfill()
        }
        wait(for: [done], timeout: 5)
        if HostReachability.of(host: "198.18.0.1").isUnreachable {
            guard case .unmonitored? = outcome.first else { return XCTFail("\(String(describing: outcome.first))") }
        }
        monitor.cancel()
    }

    func testACancelledMonitorStartsAgainAndItsObserversHearFromItAgain() throws {
        // Given a monitor started, observed, then cancelled (AFNetworking's stopMonitoring)
        let monitor = NetworkMonitor(debounce: .milliseconds(10))
        monitor.start()
        guard monitor.isMonitoring else { throw XCTSkip("netlink is not available here: \(monitor.currentPath)") }
        monitor.cancel()
        XCTAssertFalse(monitor.isMonitoring)
        // When it is started again
        monitor.start()
        defer { monitor.cancel() }
        // Then it watches again, and an observer added now is told the current path
        XCTAssertTrue(monitor.isMonitoring, "start() after cancel() did nothing")
        XCTAssertNotEqual(monitor.currentPath.status, .unknown)
        let told = expectation(description: "the current path")
        let paths = Box<NetworkPath>()
        monitor.addObserver(queue: DispatchQueue(label: "observer")) { path in
            paths.append(path)
            told.fulfill()
        }
        wait(for: [told], timeout: 5)
        XCTAssertEqual(paths.first, monitor.currentPath)
    }

    func testAnObserverAddedToARunningMonitorIsToldTheCurrentPathFirstAndOnlyOnce() throws {
        // Given a running monitor
        let monitor = NetworkMonitor(debounce: .milliseconds(10))
        monitor.start()
        defer { monitor.cancel() }
        guard monitor.isMonitoring else { throw XCTSkip("netlink is not available here: \(monitor.currentPath)") }
        // When an observer is added (nothing changes meanwhile)
        let paths = Box<NetworkPath>()
        let told = expectation(description: "the current path")
        monitor.addObserver { path in
            paths.append(path)
            told.fulfill()
        }
        wait(for: [told], timeout: 5)
        // Then it was told the current path once, as Alamofire reports the current status first
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(paths.all, [monitor.currentPath])
    }

    func testTheLoopbackInterfaceIsListedAndLocalhostIsReachableThroughIt() throws {
        // Given a started monitor in the machine's own namespace
        let monitor = NetworkMonitor()
        monitor.start()
        defer { monitor.cancel() }
        guard monitor.isMonitoring else { throw XCTSkip("netlink is not available here: \(monitor.currentPath)") }

        // Then it lists lo as an up loopback interface, and 127.0.0.1 is reachable via lo
        let lo = try XCTUnwrap(monitor.currentPath.interfaces.first { $0.kind == .loopback }, "\(monitor.currentPath.interfaces)")
        XCTAssertTrue(lo.isUp)
        XCTAssertTrue(lo.addresses.contains("127.0.0.1/8"), "\(lo)")
        XCTAssertEqual(monitor.reachability(of: "127.0.0.1"), .reachable(interface: lo.name, source: "127.0.0.1"))
        XCTAssertEqual(HostReachability.of(URL(string: "http://localhost:1/")!), .reachable(interface: lo.name, source: "127.0.0.1"))
    }

    func testTheStreamStartsWithTheCurrentPathAndEndsWhenTheMonitorIsCancelled() async throws {
        let monitor = NetworkMonitor()
        var iterator = monitor.paths().makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first, monitor.currentPath)
        monitor.cancel()
        let next = await iterator.next()
        XCTAssertNil(next)
    }

    func testAnUnreachableAnswerNeverComesFromAFailedLookup() {
        XCTAssertFalse(HostReachability.unknown("x").isUnreachable)
        XCTAssertFalse(HostReachability.unknown("x").isReachable)
        XCTAssertEqual(HostReachability.of(URL(string: "file:///tmp")!), .unknown("the URL has no host"))
    }
}
