import Foundation
import XCTest

/// A WebSocket's open honours `waitsForConnectivity` as a data task does, against a real kernel:
/// `courier-test-hooks network-ws` runs inside a network namespace of the test's own (lo down
/// at first) and the test brings lo up from outside. Skipped without root, as NetworkNamespaceTests.
final class WebSocketConnectivityTests: XCTestCase {
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

    func testAWebSocketWaitsForARouteThenOpens() throws {
        // Given a WebSocket that waits up to 20 s, in a namespace whose lo is down
        let child = try namespace.spawn(["network-ws", "20"])
        XCTAssertNotNil(child.waitForLine { $0.hasPrefix("server") }, "\(child.allLines)")

        // Then it waits, and says so as a data task does
        let waiting = try XCTUnwrap(child.waitForLine { $0 == "event pause connectivity" }, "\(child.allLines)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(child.allLines.contains { $0.hasPrefix("completed") || $0.hasPrefix("failed") })

        // When lo comes up, Then it opens and the echo answers, with the wait in its timeline
        namespace.ip("link", "set", "lo", "up")
        XCTAssertNotNil(child.waitForLine(from: waiting.index) { $0 == "event pause-ended connectivity" }, "\(child.allLines)")
        let done = try XCTUnwrap(child.waitForLine(from: waiting.index) { $0.hasPrefix("completed") || $0.hasPrefix("failed") })
        XCTAssertEqual(done.line, "completed echo=hello pauses=connectivity")
    }

    func testAWebSocketThatWaitsInVainFailsNamingTheNetwork() throws {
        let child = try namespace.spawn(["network-ws", "0.5"])

        let done = try XCTUnwrap(child.waitForLine { $0.hasPrefix("completed") || $0.hasPrefix("failed") }, "\(child.allLines)")
        XCTAssertTrue(done.line.hasPrefix("failed networkUnreachable the network is unreachable"), done.line)
        XCTAssertTrue(done.line.contains("waited 500 ms") || done.line.contains("waited 0.5 s"), done.line)
        XCTAssertFalse(child.allLines.contains("event pause-ended connectivity"))
    }

    func testWithoutWaitingAWebSocketToAHostWithNoRouteFailsAtOnceNamingTheNetwork() throws {
        let child = try namespace.spawn(["network-ws", "none"])

        let done = try XCTUnwrap(child.waitForLine(timeout: 5) { $0.hasPrefix("completed") || $0.hasPrefix("failed") }, "\(child.allLines)")
        XCTAssertTrue(done.line.hasPrefix("failed networkUnreachable"), done.line)
        XCTAssertFalse(child.allLines.contains("event pause connectivity"))
    }
}
