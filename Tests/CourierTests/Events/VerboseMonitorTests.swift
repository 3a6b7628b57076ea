import CourierSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `VerboseMonitor` (`courier get -v`'s trace) over a real socket: the heads curl's way, secrets
/// masked, and the timeline once the task completed.
final class VerboseMonitorTests: CourierTestCase {
    private let written = Locked("")
    private var monitor: VerboseMonitor!

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let written = written
        let printer = ProgressPrinter(style: .plain, write: { text in written.withLock { $0 += text } })
        monitor = VerboseMonitor(printer: printer, redaction: Redaction.default.adding(headers: ["X-Session"]))
        configuration.eventMonitors = [monitor]
        return configuration
    }

    func testTheHeadsAndTimelineArePrintedWithSecretsMasked() throws {
        // Given a request with a secret header, a header the redaction adds, and a secret parameter
        var request = URLRequest(url: server.url("/bytes/10?token=s3cret"))
        request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
        request.setValue("s3cret", forHTTPHeaderField: "X-Session")

        // When it completes
        XCTAssertEqual(data(request).response?.statusCode, 200)
        monitor.waitUntilPrinted(seconds: 5)

        // Then the trace has the attempt, both heads and the timeline, and no secret
        let text = written.current
        XCTAssertTrue(text.contains("* attempt 0 (initial)\n> GET "), text)
        XCTAssertTrue(text.contains("token=***"), text)
        XCTAssertTrue(text.contains("> Authorization: ***"), text)
        XCTAssertTrue(text.contains("> X-Session: ***"), text)
        XCTAssertTrue(text.contains("< 200 "), text)
        XCTAssertTrue(text.contains("* completed\n* timeline (ms since the task was created):"), text)
        XCTAssertFalse(text.contains("s3cret"), text)
    }
}
