import Foundation
import XCTest
@testable import Courier

/// `CurlByteStream`'s pure decisions: the URL libcurl is given, and libcurl's failures as the
/// codes HTTP requests get.
final class CurlByteStreamDecisionTests: XCTestCase {
    private func connectURL(_ text: String) throws -> String {
        try CurlByteStream.connectURL(for: XCTUnwrap(URL(string: text))).absoluteString
    }

    func testWebSocketSchemesBecomeHTTPSchemesWithOnlyHostAndPort() throws {
        XCTAssertEqual(try connectURL("wss://example.com/chat?room=1#x"), "https://example.com/")
        XCTAssertEqual(try connectURL("WSS://example.com:8443/chat"), "https://example.com:8443/")
        XCTAssertEqual(try connectURL("ws://127.0.0.1:9001/runCase?case=1"), "http://127.0.0.1:9001/")
        XCTAssertEqual(try connectURL("https://example.com/a"), "https://example.com/")
        XCTAssertEqual(try connectURL("wss://[::1]:9443/a"), "https://[::1]:9443/")
    }

    func testOtherSchemesAndMissingHostsAreInvalidRequests() {
        for text in ["ftp://example.com/", "wss:///path", "file:///tmp/x"] {
            XCTAssertThrowsError(try connectURL(text), text) { error in
                XCTAssertEqual((error as? CourierError)?.code, .invalidRequest, text)
            }
        }
    }

    func testCurlCodesMapAsFoundationNetworkingMapsThem() {
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 6), NSURLErrorCannotFindHost)
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 28), NSURLErrorTimedOut)
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 52), NSURLErrorBadServerResponse)
        // Read by libcurl's text, as FoundationNetworking reports them
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 7), -1)
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 60), -1)
        XCTAssertEqual(CurlByteStream.urlErrorCode(curlCode: 90), -1)
    }

    func testLibcurlFailuresGetTheCodesHTTPRequestsGet() {
        let url = URL(string: "wss://127.0.0.1:8443/")!
        let tls = TLSContext(host: "127.0.0.1:8443", policy: nil)
        let cases: [(Int32, String, CourierError.Code)] = [
            (7, "Failed to connect to 127.0.0.1 port 8443 after 0 ms: Couldn't connect to server", .connectionRefused),
            (6, "Could not resolve host: nowhere.invalid", .dnsFailed),
            (5, "Could not resolve proxy: proxy.invalid", .dnsFailed),
            (28, "Connection timed out after 500 milliseconds", .timedOut),
            (60, "SSL certificate problem: unable to get local issuer certificate", .tlsCertificateUntrusted),
            (60, "SSL certificate problem: certificate has expired", .tlsCertificateExpired),
            (60, "SSL: no alternative certificate subject name matches target host name '127.0.0.1'", .tlsHostNameMismatch),
            (90, "SSL: public key does not match pinned public key", .tlsPinMismatch),
            (
                56, "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
                .tlsClientCertificateRequired
            ),
            (56, "Recv failure: Connection reset by peer", .connectionLost),
            (55, "Send failure: Broken pipe", .connectionLost),
            (35, "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number", .tlsFailed),
            (42, "Callback aborted", .cancelled),
        ]
        for (curlCode, text, expected) in cases {
            let error = CurlByteStream.error(curlCode: curlCode, text: text, url: url, tls: tls)
            XCTAssertEqual(error.code, expected, text)
            XCTAssertEqual(error.url, url)
            if expected.isTLS { XCTAssertTrue(error.message.contains("host 127.0.0.1:8443"), error.message) }
        }
    }

    func testAnEmptyErrorTextStillSaysWhichCode() {
        let error = CurlByteStream.error(curlCode: 99, text: "", url: URL(string: "wss://h/")!, tls: nil)
        XCTAssertEqual(error.code, .network)
        XCTAssertTrue(error.message.contains("libcurl error 99"), error.message)
    }

    func testMissingFunctionsAreNamed() {
        let all = UInt32(COURIER_STREAM_ALL_FOR_TESTS)
        XCTAssertNil(CurlByteStream.missingFunctions(found: all))
        XCTAssertEqual(CurlByteStream.missingFunctions(found: all & ~(1 << 4)), ["curl_easy_recv"])
        XCTAssertEqual(CurlByteStream.missingFunctions(found: 0)?.count, 7)
    }
}

/// Every COURIER_STREAM_ bit (the C enum is not imported into the tests).
private let COURIER_STREAM_ALL_FOR_TESTS = (1 << 7) - 1
