import CourierTestSupport
import XCTest

/// The test TLS server stops whichever thread started it (``Process/stopAndWait(grace:)``).
final class OpenSSLServerStopTests: TLSServerTestCase {
    func testAServerStartedOnADispatchThreadStillStops() throws {
        // Given a server started on a Dispatch worker thread, whose signal mask blocks SIGTERM
        let started = expectation(description: "started")
        let server = Box<OpenSSLServer>()
        let failure = Box<String>()
        DispatchQueue.global().async { [pki] in
            do { _ = server.append(try OpenSSLServer(pki: pki!)) } catch { _ = failure.append("\(error)") }
            started.fulfill()
        }
        wait(for: [started], timeout: 20)
        XCTAssertEqual(failure.all, [])
        let running = try XCTUnwrap(server.all.first)

        // When it is stopped
        let stopped = expectation(description: "stopped")
        DispatchQueue.global().async {
            running.stop()
            stopped.fulfill()
        }

        // Then it is gone within the grace period, not left running with the test waiting for it
        wait(for: [stopped], timeout: 10)
        XCTAssertFalse(running.isRunning)
    }
}
