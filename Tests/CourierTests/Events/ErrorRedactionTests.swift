import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `CourierError` says — its message and description, the timeline's error lines, a
/// queue's journaled failure — never holds a URL's user info or a secret query parameter in
/// clear, over real sockets; `error.url` keeps the URL as requested, for code.
final class ErrorRedactionTests: CourierTestCase {
    /// Distinctive values, so that "not in the text" cannot pass by accident.
    static let secrets = ["PASSW0RD", "T0KEN-VALUE", "S1GNATURE-VALUE"]

    private func assertNoSecret(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in Self.secrets {
            XCTAssertFalse(text.contains(secret), "\(what) shows \(secret): \(text)", file: file, line: line)
        }
    }

    /// `http://u:PASSW0RD@127.0.0.1:<port><path>?token=…&X-Amz-Signature=…&part=2`.
    private func secretURL(_ path: String, port: UInt16) throws -> URL {
        try XCTUnwrap(URL(string: "http://u:PASSW0RD@127.0.0.1:\(port)\(path)?token=T0KEN-VALUE&X-Amz-Signature=S1GNATURE-VALUE&part=2"))
    }

    func testAFailedRequestsDescriptionShowsNeitherUserInfoNorQuerySecrets() throws {
        // Given a presigned-looking URL with user info that answers 404
        let url = try secretURL("/status/404", port: server.port)
        // When it is asked for
        let response = data(URLRequest(url: url))
        let error = try XCTUnwrap(response.error)
        // Then the error says where, masked, and keeps the URL in clear for code
        XCTAssertEqual(error.code, .unacceptableStatusCode)
        assertNoSecret(error.description, "description")
        assertNoSecret(error.message, "message")
        XCTAssertTrue(
            error.description.contains("(http://***@127.0.0.1:\(server.port)/status/404?token=***&X-Amz-Signature=***&part=2)"),
            error.description)
        XCTAssertEqual(error.url, url, "the URL as requested, for code")
        XCTAssertTrue(try XCTUnwrap(response.metrics).timeline().contains("/status/404?token=***"))
    }

    func testATransportErrorsDescriptionMasksTheURLInItsUnderlyingError() throws {
        // Given a port nothing listens on
        let closed = try TestServer()
        let port = closed.port
        closed.stop()
        let url = try secretURL("/get", port: port)
        // When it is asked for
        let error = try XCTUnwrap(data(URLRequest(url: url)).error)
        // Then neither the message nor URLError's text (which names the failing URL) shows a secret
        XCTAssertEqual(error.code, .connectionRefused, "\(error)")
        XCTAssertNotNil(error.underlyingError)
        assertNoSecret(error.description, "description")
        assertNoSecret(String(describing: error), "interpolation")
        assertNoSecret(error.message, "message")
        XCTAssertEqual(error.url, url)
    }

    func testARefusedRedirectsMessageAndTimelineMaskTheLocation() throws {
        // Given a server that redirects to a non-http URL holding user info and a token
        let location = "ftp://u:PASSW0RD@files.example/f?token=T0KEN-VALUE"
        let encoded = try XCTUnwrap(location.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        // When it is asked for
        let response = data(request("/redirect-to?url=\(encoded)"))
        let error = try XCTUnwrap(response.error)
        // Then the refusal names the target, masked, in the message, the description and the timeline
        // (the requested URL carries the target percent-encoded inside its own `url=` parameter,
        // which Redaction does not look into: only the target's clear text must not appear)
        XCTAssertEqual(error.code, .redirectRefused, "\(error)")
        XCTAssertTrue(error.message.contains("ftp://***@files.example/f?token=***"), error.message)
        assertNoSecret(error.message, "message")
        let clear = ["u:PASSW0RD@", "token=T0KEN-VALUE"]
        for text in clear { XCTAssertFalse(error.description.contains(text), error.description) }
        let timeline = try XCTUnwrap(response.metrics).timeline()
        for text in clear { XCTAssertFalse(timeline.contains(text), timeline) }
        XCTAssertTrue(timeline.contains("error: redirectRefused: refused a redirect to ftp://***@files.example/f?token=***"), timeline)
    }

    func testAQueuedDownloadsJournaledFailureHoldsNoSecret() async throws {
        // Given a queue whose item is refused a redirect to a URL with secrets
        let location = "ftp://u:PASSW0RD@files.example/f?token=T0KEN-VALUE"
        let encoded = try XCTUnwrap(location.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let queueDirectory = directory.appendingPathComponent("queue")
        var queue: DownloadQueue? = try DownloadQueue(directory: queueDirectory, manager: manager)
        try queue!.add(contentsOf: [
            .init(url: server.url("/redirect-to?url=\(encoded)"), to: directory.appendingPathComponent("out/f"), id: "f")
        ])
        // When it fails, and the queue is reopened from its journal
        waitUntil("the item failed", timeout: 20) { queue!.item("f")?.state.isFinished ?? false }
        await queue!.stop()
        queue = nil
        let reopened = try DownloadQueue(directory: queueDirectory, manager: manager)
        // Then the journaled failure text names the target masked
        guard case .failed(let failure) = reopened.item("f")?.state else {
            return XCTFail("not failed: \(String(describing: reopened.item("f")))")
        }
        XCTAssertEqual(failure.code, .redirectRefused)
        XCTAssertTrue(failure.message.contains("ftp://***@files.example/f?token=***"), failure.message)
        assertNoSecret(failure.message, "journaled failure")
        await reopened.stop()
    }

    // MARK: - Without sockets

    func testAMessageIsMaskedWhenTheErrorIsMadeWhateverBuiltIt() throws {
        let error = CourierError(
            code: .network, message: "gave up on http://u:P@W@h/x?sig=S1GNATURE-VALUE (after https://h/?code=PASSW0RD)",
            url: URL(string: "http://u:P%40W@h/x?token=T0KEN-VALUE&page=2"),
            underlyingError: URLError(
                .cannotConnectToHost,
                userInfo: [
                    NSURLErrorFailingURLErrorKey: URL(string: "http://u:PASSW0RD@h/x?token=T0KEN-VALUE")!
                ]))
        XCTAssertEqual(error.message, "gave up on http://***@h/x?sig=*** (after https://h/?code=***)")
        XCTAssertTrue(
            error.description.hasPrefix(
                "network: gave up on http://***@h/x?sig=*** (after https://h/?code=***) (http://***@h/x?token=***&page=2)"),
            error.description)
        assertNoSecret(error.description, "description")
        XCTAssertEqual(error.url?.absoluteString, "http://u:P%40W@h/x?token=T0KEN-VALUE&page=2")
    }
}
