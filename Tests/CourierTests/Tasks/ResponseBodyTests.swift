import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Accumulating bodies: limits, encodings, truncation, HTTP statuses.
final class ResponseBodyTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        return configuration
    }

    func testBodyAtTheLimitIsAccepted() {
        XCTAssertEqual(data(request("/bytes/1048576")).value?.count, 1_048_576)
    }

    func testDeclaredLengthOverTheLimitIsRefusedWithResponseTooLarge() {
        let response = data(request("/bytes/1048577"))
        XCTAssertEqual(response.error?.code, .responseTooLarge)
        XCTAssertEqual(response.error?.statusCode, 200)
        XCTAssertTrue(response.error?.description.contains("1048576") ?? false)
    }

    func testChunkedBodyGrowingPastTheLimitIsStopped() {
        XCTAssertEqual(data(request("/stream-bytes/3000000?chunk_size=16384")).error?.code, .responseTooLarge)
    }

    func testGzipBombIsStoppedAtTheLimit() {
        // A few hundred KB on the wire that inflate to 32 MiB: the limit counts decoded bytes.
        XCTAssertEqual(data(request("/gzip-bomb?size=33554432")).error?.code, .responseTooLarge)
    }

    func testGzipBodyIsDecoded() throws {
        let response = wait { finish in
            manager.dataTask(with: request("/gzip"), serializer: .json, completion: finish).resume()
        }
        XCTAssertEqual(response?.value?["gzipped"]?.bool, true)
    }

    func testBodyCutShortIsAConnectionLostErrorWithTheResponse() {
        let response = data(request("/bytes/100000?close_after=5000"))
        XCTAssertEqual(response.error?.code, .connectionLost)
        XCTAssertEqual(response.error?.isTransport, true)
        XCTAssertEqual(response.error?.statusCode, 200, "the head had arrived")
    }

    func testLyingContentLengthIsAConnectionLostError() {
        XCTAssertEqual(data(request("/bytes/1000?lie_length=5000")).error?.code, .connectionLost)
    }

    func testConnectionClosedBeforeAnswerIsANoResponseError() {
        XCTAssertEqual(data(request("/close-immediately")).error?.code, .noResponse)
    }

    func testUnauthorizedWithoutCredentialCompletesPromptlyAsHTTP401() {
        // URLSession on Linux hangs forever here by default (Docs/Platform.md §2.4).
        let started = Date()
        let response = data(request("/basic-auth/user/secret"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(response.error?.code, .unacceptableStatusCode)
        XCTAssertEqual(response.error?.statusCode, 401)
        XCTAssertFalse(response.error?.isCancellation ?? true, "a 401 is an HTTP status, not a cancellation")
    }

    func testUnauthorizedIsASuccessWhenValidationAcceptsIt() {
        let response = data(request("/basic-auth/user/secret"), validation: .none)
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(response.value, Data(#"{"authenticated":false}"#.utf8))
    }

    func testServerErrorCarriesStatusAndBody() {
        let response = data(request("/status/500?body=broken"))
        XCTAssertEqual(response.error?.code, .unacceptableStatusCode)
        XCTAssertEqual(response.error?.statusCode, 500)
        XCTAssertEqual(response.error?.body, Data("broken".utf8))
        XCTAssertEqual(response.data, Data("broken".utf8))
    }

    func testEmptyBodyIsValidFor204ButNotFor200() {
        XCTAssertEqual(data(request("/status/204")).value, Data())
        XCTAssertEqual(data(request("/status/200")).error?.code, .emptyResponse)
    }

    func testHeadResponseWithoutBodyIsValid() {
        let response = data(request("/bytes/500", method: "HEAD"))
        XCTAssertNil(response.error)
        XCTAssertEqual(response.value, Data())
    }

    func testRedirectsAreFollowed() {
        let response = data(request("/redirect/3"))
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.url?.path, "/get")
        XCTAssertEqual(server.requests.count, 4)
    }
}
