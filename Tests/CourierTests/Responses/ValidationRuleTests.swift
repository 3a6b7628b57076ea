import CourierTestServer
import CourierTestSupport
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validation rules of the caller's own (`validate { … }`) and the opt-in `Accept` rule, over
/// real sockets: what a task that breaks them ends with, and that they compose with the built-in
/// status and content-type checks.
final class ValidationRuleTests: CourierTestCase {
    /// An API's error envelope, sent with a 200 by servers that never use error statuses.
    struct APIFailure: Error, Decodable, Equatable {
        let error: String
    }

    /// Answers every request with `status`, `contentType` and `body`.
    private func server(status: Int = 200, contentType: String?, body: String) throws -> ScriptedServer {
        try ScriptedServer { _, _ in
            var headers = [("Content-Length", String(body.utf8.count))]
            if let contentType { headers.append(("Content-Type", contentType)) }
            return .response(status: status, headers: headers, body: Data(body.utf8))
        }
    }

    private let envelope = Validation.default.validate { _, _, body throws(APIFailure) in
        if let body, let failure = try? JSONDecoder().decode(APIFailure.self, from: body) { throw failure }
    }

    func testARuleRefusesA200ThatCarriesAnErrorEnvelopeWithItsOwnTypedFailure() throws {
        // Given a server that answers 200 with an error envelope
        let api = try server(contentType: "application/json", body: #"{"error":"quota exceeded"}"#)
        defer { api.stop() }
        // When a task validates with a rule that decodes the envelope
        let response = data(URLRequest(url: api.url("/v1/items")), validation: envelope)
        // Then it fails with unacceptableResponse, and the rule's own error comes back typed
        XCTAssertEqual(response.error?.code, .unacceptableResponse)
        XCTAssertEqual(response.error?.underlyingError as? APIFailure, APIFailure(error: "quota exceeded"))
        XCTAssertEqual(response.error?.statusCode, 200)
        XCTAssertEqual(response.error?.body, Data(#"{"error":"quota exceeded"}"#.utf8))
        XCTAssertTrue(response.error?.message.contains("a validation rule refused the response") == true, "\(response.error!)")
    }

    func testARuleLetsAGoodAnswerThrough() throws {
        let api = try server(contentType: "application/json", body: #"{"items":[]}"#)
        defer { api.stop() }
        let response = data(URLRequest(url: api.url("/v1/items")), validation: envelope)
        XCTAssertNil(response.error)
        XCTAssertEqual(response.value, Data(#"{"items":[]}"#.utf8))
    }

    func testRulesRunAfterTheStatusCheckAndInTheOrderAdded() throws {
        // Given two rules that record their turn, after a status rule
        let api = try server(status: 503, contentType: "text/plain", body: "busy")
        defer { api.stop() }
        let order = Box<String>()
        let validation = Validation.default
            .validate { _, _, _ in order.append("first") }
            .validate { _, _, _ in order.append("second") }
        // When the status is refused, no rule runs
        XCTAssertEqual(data(URLRequest(url: api.url("/")), validation: validation).error?.code, .unacceptableStatusCode)
        XCTAssertEqual(order.all, [])
        // When every status is accepted, both run, in order
        let any = Validation.none
            .validate { _, _, _ in order.append("first") }
            .validate { _, response, _ in
                order.append("second")
                struct Busy: Error {}
                if response.statusCode == 503 { throw Busy() }
            }
        let refused = data(URLRequest(url: api.url("/")), validation: any)
        XCTAssertEqual(refused.error?.code, .unacceptableResponse)
        XCTAssertEqual(order.all, ["first", "second"])
    }

    func testADownloadARuleRefusesIsNotPublished() throws {
        // Given a download whose rule refuses what the server sends (a rule sees no body: it is on disk)
        let api = try server(contentType: "application/octet-stream", body: "not the file")
        defer { api.stop() }
        let destination = directory.appendingPathComponent("file.bin")
        let seenBody = Box<Bool>()
        let validation = Validation.default.validate { _, response, body in
            seenBody.append(body != nil)
            struct WrongVersion: Error {}
            if response.value(forHTTPHeaderField: "ETag") == nil { throw WrongVersion() }
        }
        let report = wait { finish in
            manager.downloadTask(
                with: URLRequest(url: api.url("/file.bin")), to: .file(destination), validation: validation, completion: finish
            )
            .resume()
        }
        // Then it fails unacceptableResponse and nothing is at the destination
        XCTAssertEqual(report?.error?.code, .unacceptableResponse)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(seenBody.all, [false])
    }

    func testMatchingAcceptRefusesATypeTheRequestDidNotAskFor() throws {
        // Given a server that answers HTML to everything
        let html = try server(contentType: "text/html; charset=utf-8", body: "<p>sign in</p>")
        defer { html.stop() }
        var request = URLRequest(url: html.url("/api"))
        request.setValue("application/json, application/problem+json;q=0.9", forHTTPHeaderField: "Accept")
        // When the request asks for JSON and the validation matches Accept
        let refused = data(request, validation: Validation.default.matchingAccept())
        // Then the HTML answer is refused, naming both
        XCTAssertEqual(refused.error?.code, .unacceptableResponse)
        XCTAssertTrue(refused.error?.message.contains("text/html") == true, "\(refused.error!)")
        XCTAssertTrue(refused.error?.message.contains("application/json") == true, "\(refused.error!)")
        // And without the opt-in, the same answer passes
        XCTAssertNil(data(request, validation: .default).error)
    }

    func testMatchingAcceptTakesWildcardsAndQZeroAndPassesWithoutAccept() throws {
        let json = try server(contentType: "application/json", body: "{}")
        defer { json.stop() }
        func outcome(_ accept: String?) -> CourierError.Code? {
            var request = URLRequest(url: json.url("/"))
            request.setValue(accept, forHTTPHeaderField: "Accept")
            return data(request, validation: Validation.default.matchingAccept()).error?.code
        }
        XCTAssertNil(outcome("application/*"))
        XCTAssertNil(outcome("*/*"))
        XCTAssertNil(outcome("text/html, application/json;q=0.1"))
        XCTAssertEqual(outcome("application/json;q=0, text/html"), .unacceptableResponse)
        // URLSession sends `*/*` when the request sets none: everything is allowed then
        XCTAssertNil(outcome(nil))
    }

    func testTheAcceptRangesAreReadAsRFC9110Says() {
        XCTAssertEqual(
            Validation.acceptedRanges("Application/JSON; charset=utf-8, text/*;q=0.5, image/png;q=0"), ["application/json", "text/*"])
        XCTAssertEqual(Validation.acceptedRanges(" , */*;q=0.0"), [])
        XCTAssertEqual(Validation.acceptedRanges("*/*"), ["*/*"])
    }
}
