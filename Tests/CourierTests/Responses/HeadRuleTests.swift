import CourierTestServer
import CourierTestSupport
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decisions at the response head (`Validation.validateHead`), over real sockets: a refused head
/// lets no body byte through to memory, a file or a stream, however fast the body follows it.
final class HeadRuleTests: CourierTestCase {
    /// The caller's own reason to refuse.
    struct TooLarge: Error, Equatable {
        let length: Int64
    }

    /// Refuses any response that announces more than 1 MB.
    private let sizeRule = Validation.default.validateHead { _, response throws(TooLarge) in
        if response.expectedContentLength > 1_000_000 { throw TooLarge(length: response.expectedContentLength) }
    }

    /// A server that announces 2 GiB and sends its first 512 KiB in the same write as the head
    /// (the body is already in the socket when the head is read), then keeps the connection open.
    private func hugeAnswer() throws -> ScriptedServer {
        try ScriptedServer { _, _ in
            .response(
                status: 200, headers: [("Content-Length", "2147483648"), ("Content-Type", "application/octet-stream")],
                body: Data(repeating: 0x61, count: 512 * 1024), ending: .hang)
        }
    }

    func testARefusedHeadFailsADataTaskWithTheRulesTypedErrorAndNoBody() throws {
        // Given a server announcing 2 GiB with the body right behind the head
        let huge = try hugeAnswer()
        defer { huge.stop() }
        for _ in 0..<5 {
            // When a data task's head rule refuses more than 1 MB
            let received = Box<Int64>()
            let response = wait { finish in
                manager.dataTask(
                    with: URLRequest(url: huge.url("/big")), validation: sizeRule,
                    downloadProgress: { received.append($0.completedUnitCount) }, completion: finish
                ).resume()
            }
            // Then it fails unacceptableResponse, typed, carrying the head and no body byte
            XCTAssertEqual(response?.error?.code, .unacceptableResponse)
            XCTAssertEqual(response?.error?.underlyingError as? TooLarge, TooLarge(length: 2_147_483_648))
            XCTAssertEqual(response?.error?.statusCode, 200)
            XCTAssertNil(response?.error?.body)
            XCTAssertNil(response?.value)
            // And the head the rule saw is the response, as for a status code refused
            XCTAssertEqual(response?.response?.statusCode, 200)
            XCTAssertEqual(response?.response?.expectedContentLength, 2_147_483_648)
            XCTAssertEqual(received.all.filter { $0 > 0 }, [], "body bytes were counted after the refusal")
            XCTAssertTrue(response?.error?.message.contains("head rule refused") == true, "\(String(describing: response?.error))")
        }
    }

    func testARefusedHeadWritesNothingForADownloadAndPublishesNothing() throws {
        let huge = try hugeAnswer()
        defer { huge.stop() }
        for round in 0..<5 {
            // When a download's head rule refuses the announced size
            let destination = directory.appendingPathComponent("big-\(round).bin")
            let received = Box<Int64>()
            let report = wait { finish in
                manager.downloadTask(
                    with: URLRequest(url: huge.url("/big.bin")), to: .file(destination), validation: sizeRule,
                    progress: { received.append($0.completedUnitCount) }, completion: finish
                ).resume()
            }
            // Then it fails typed, nothing is at the destination, no staging file is left and
            // no byte was counted as written
            XCTAssertEqual(report?.error?.code, .unacceptableResponse)
            XCTAssertEqual(report?.error?.underlyingError as? TooLarge, TooLarge(length: 2_147_483_648))
            XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
            XCTAssertEqual(stagingFiles(in: directory), [])
            XCTAssertEqual(received.all.filter { $0 > 0 }, [])
        }
    }

    func testARefusedHeadHandsAStreamNoByte() async throws {
        let huge = try hugeAnswer()
        defer { huge.stop() }
        // When a byte stream's head rule refuses the announced size
        do {
            let (stream, _) = try await manager.bytes(for: URLRequest(url: huge.url("/big")), validation: sizeRule)
            var count = 0
            for try await _ in stream { count += 1 }
            XCTFail("the stream was handed over with \(count) bytes")
        } catch {
            // Then the call itself throws the refusal: no stream, so no byte, ever reached the caller
            XCTAssertEqual(error.code, .unacceptableResponse)
            XCTAssertEqual(error.underlyingError as? TooLarge, TooLarge(length: 2_147_483_648))
        }
    }

    func testAHeadTheRuleAllowsGoesOnAsBefore() throws {
        // Given a rule that refuses only large bodies, and a small one
        let seen = Box<Int>()
        let validation = sizeRule.validateHead { _, response in seen.append(response.statusCode) }
        // When the body is small
        let response = data(request("/bytes/1000"), validation: validation)
        // Then it arrives whole, and each rule ran once, in order, before it
        XCTAssertNil(response.error)
        XCTAssertEqual(response.value?.count, 1000)
        XCTAssertEqual(seen.all, [200])
    }

    func testHeadRulesSeeNeitherAFollowedRedirectNorA401AnsweredWithTheCredential() throws {
        // Given a rule that records every head it is shown and refuses anything but 200
        let seen = Box<Int>()
        struct NotOK: Error {}
        let validation = Validation.default.validateHead { _, response throws(NotOK) in
            seen.append(response.statusCode)
            if response.statusCode != 200 { throw NotOK() }
        }
        // When the answer comes after two redirects
        XCTAssertNil(data(request("/redirect/2"), validation: validation).error)
        // And when it comes after a 401 the task answers with its credential
        let answered = wait { finish in
            manager.dataTask(with: request("/basic-auth/ann/pw"), validation: validation, completion: finish)
                .authenticate(with: Credential(user: "ann", password: "pw")).resume()
        }
        XCTAssertNil(answered?.error)
        // Then the rule saw only the two final 200s
        XCTAssertEqual(seen.all, [200, 200])
        // And a 401 that is not answered is shown, and refused at its head
        let refused = data(request("/basic-auth/ann/pw"), validation: validation)
        XCTAssertEqual(refused.error?.code, .unacceptableResponse)
        XCTAssertEqual(seen.all, [200, 200, 401])
    }

    func testTheAsyncCallThrowsTheRefusal() async throws {
        struct WrongType: Error {}
        let validation = Validation.default.validateHead { _, response throws(WrongType) in
            if response.mimeType != "application/json" { throw WrongType() }
        }
        do {
            _ = try await manager.data(for: request("/html"), validation: validation)
            XCTFail("the HTML answer passed")
        } catch {
            XCTAssertEqual(error.code, .unacceptableResponse)
            XCTAssertTrue(error.underlyingError is WrongType)
        }
        let (body, _) = try await manager.data(for: request("/json"), validation: validation)
        XCTAssertFalse(body.isEmpty)
    }
}
