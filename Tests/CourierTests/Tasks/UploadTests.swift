import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class UploadTests: CourierTestCase {
    private func echoed(_ body: UploadBody, contentType: String? = "application/octet-stream") -> (JSONValue?, CourierError?) {
        var request = request("/anything", method: "POST")
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let response = wait { finish in
            manager.uploadTask(with: request, from: body, serializer: .json, completion: finish).resume()
        }
        return (response?.value, response?.error)
    }

    func testUploadFromDataSendsTheBody() {
        let body = TestServer.deterministicBytes(count: 70_000, seed: 9)
        let (json, error) = echoed(.data(body))
        XCTAssertNil(error)
        XCTAssertEqual(json?["bodyBase64"]?.string, body.base64EncodedString())
        XCTAssertEqual(server.requests.last?.header("Content-Length"), "70000")
    }

    func testUploadFromFileSendsTheFile() throws {
        let file = directory.appendingPathComponent("upload.bin")
        let body = TestServer.deterministicBytes(count: 300_000, seed: 10)
        try body.write(to: file)
        let (json, error) = echoed(.file(file))
        XCTAssertNil(error)
        XCTAssertEqual(json?["bodyLength"]?.int, 300_000)
        XCTAssertEqual(server.requests.last?.body, body)
    }

    func testUploadFromMissingFileIsATypedErrorAtOnce() {
        let (_, error) = echoed(.file(directory.appendingPathComponent("missing.bin")))
        XCTAssertEqual(error?.code, .uploadSourceFailed)
        XCTAssertTrue(error?.message.contains("does not exist") ?? false)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testUploadFromADirectoryIsATypedError() {
        let (_, error) = echoed(.file(directory))
        XCTAssertEqual(error?.code, .uploadSourceFailed)
        XCTAssertTrue(error?.message.contains("is a directory") ?? false)
    }

    func testUploadFromStreamSendsTheStreamedBody() {
        let body = TestServer.deterministicBytes(count: 123_456, seed: 11)
        let (json, error) = echoed(.stream(length: Int64(body.count)) { InputStream(data: body) })
        XCTAssertNil(error)
        XCTAssertEqual(json?["bodyLength"]?.int, 123_456)
        XCTAssertEqual(server.requests.last?.body, body)
    }

    func testStreamFactoryThatThrowsFailsTheTaskInsteadOfSendingAnEmptyBody() {
        struct NoStream: Error {}
        let (_, error) = echoed(.stream(length: nil) { throw NoStream() })
        XCTAssertEqual(error?.code, .uploadSourceFailed)
    }

    func testUploadReplyIsValidatedLikeAnyResponse() {
        let response = wait { finish in
            manager.uploadTask(with: request("/status/503", method: "PUT"), from: .data(Data("x".utf8)), completion: finish)
                .resume()
        }
        XCTAssertEqual(response?.error?.code, .unacceptableStatusCode)
        XCTAssertEqual(response?.error?.statusCode, 503)
    }
}
