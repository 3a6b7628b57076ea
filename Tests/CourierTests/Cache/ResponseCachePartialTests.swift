import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Partial content through the cache over real sockets: ranges answered from a stored whole
/// response, `206` answers stored and combined, and a stored part never answering a whole request.
final class ResponseCachePartialTests: ScriptedOriginTestCase {
    private func answer(_ body: String, status: Int = 200, _ headers: [(String, String)]) -> ScriptedServer.Reply {
        .response(
            status: status, reason: status == 206 ? "Partial Content" : "OK",
            headers: headers + [("Content-Length", String(body.utf8.count))], body: Data(body.utf8))
    }

    private func get(range: String? = nil) -> DataResponse<Data> {
        var request = URLRequest(url: origin.url("/file"))
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        return data(request, validation: .none)
    }

    private func header(_ response: DataResponse<Data>, _ name: String) -> String? {
        response.response?.value(forHTTPHeaderField: name)
    }

    func testAFreshWholeAnswerServesRangesAnd416WithoutARoundTrip() {
        // Given a fresh whole answer in the cache
        script(answer("01234567890", [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")]))
        XCTAssertEqual(get().cacheOutcome, .miss)
        // When ranges of it are asked for
        let first = get(range: "bytes=0-1")
        let suffix = get(range: "bytes=-1")
        let open = get(range: "bytes=1-")
        let beyond = get(range: "bytes=50-")
        // Then the cache answers each as the origin would, with the slice and its place
        XCTAssertEqual(first.response?.statusCode, 206)
        XCTAssertEqual(first.data, Data("01".utf8))
        XCTAssertEqual(header(first, "Content-Range"), "bytes 0-1/11")
        XCTAssertEqual(header(first, "Content-Length"), "2")
        XCTAssertEqual(header(first, "ETag"), "\"v1\"")
        XCTAssertEqual(first.cacheOutcome, .hit)
        XCTAssertTrue(header(first, "Cache-Status")?.hasPrefix("Courier; hit") == true)
        XCTAssertEqual(suffix.data, Data("0".utf8))
        XCTAssertEqual(header(suffix, "Content-Range"), "bytes 10-10/11")
        XCTAssertEqual(open.data, Data("1234567890".utf8))
        XCTAssertEqual(beyond.response?.statusCode, 416)
        XCTAssertEqual(header(beyond, "Content-Range"), "bytes */11")
        XCTAssertEqual(beyond.data, Data())
        XCTAssertEqual(origin.requests.count, 1, "only the first request reached the origin")
    }

    func testAStored206AnswersRangesInsideItButNeverAWholeRequest() {
        // Given a 206 for the last five bytes in the cache
        script(
            answer("56789", status: 206, [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 5-9/10"), ("ETag", "\"v1\"")]),
            answer("0123456789", [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")]))
        let stored = get(range: "bytes=-5")
        XCTAssertEqual(stored.response?.statusCode, 206)
        XCTAssertEqual(origin.requests.last?.header("Range"), "bytes=-5", "the request went out as it was")
        // When a range inside it, then the whole, are asked for
        let inside = get(range: "bytes=6-8")
        let whole = get()
        // Then the part answers the range, and the whole comes from the origin
        XCTAssertEqual(inside.response?.statusCode, 206)
        XCTAssertEqual(inside.data, Data("678".utf8))
        XCTAssertEqual(header(inside, "Content-Range"), "bytes 6-8/10")
        XCTAssertEqual(inside.cacheOutcome, .hit)
        XCTAssertEqual(whole.response?.statusCode, 200)
        XCTAssertEqual(whole.data, Data("0123456789".utf8))
        XCTAssertEqual(whole.cacheOutcome, .miss)
        XCTAssertEqual(origin.requests.count, 2)
        XCTAssertNil(origin.requests.last?.header("Range"))
    }

    func testTwo206sWithTheSameStrongETagBecomeAWholeAnswer() {
        // Given two halves with one strong ETag
        script(
            answer("01234", status: 206, [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 0-4/10"), ("ETag", "\"v1\"")]),
            answer("56789", status: 206, [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 5-9/10"), ("ETag", "\"v1\"")]))
        _ = get(range: "bytes=0-4")
        _ = get(range: "bytes=5-9")
        // When the whole is asked for
        let whole = get()
        // Then the cache answers it, a 200 with every byte, without a third request
        XCTAssertEqual(whole.response?.statusCode, 200)
        XCTAssertEqual(whole.data, Data("0123456789".utf8))
        XCTAssertEqual(header(whole, "Content-Length"), "10")
        XCTAssertNil(header(whole, "Content-Range"))
        XCTAssertEqual(whole.cacheOutcome, .hit)
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testTwo206sOfDifferentVersionsAreNeverMixed() {
        // Given two halves whose ETags differ (and a third answer for the whole)
        script(
            answer("01234", status: 206, [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 0-4/10"), ("ETag", "\"v1\"")]),
            answer("ABCDE", status: 206, [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 5-9/10"), ("ETag", "\"v2\"")]),
            answer("01234ABCDE", [("Cache-Control", "max-age=3600"), ("ETag", "\"v2\"")]))
        _ = get(range: "bytes=0-4")
        _ = get(range: "bytes=5-9")
        // When the first half, then the whole, are asked for
        let firstHalf = get(range: "bytes=0-4")
        let whole = get()
        // Then neither comes from a mix: the first half is asked again, the whole from the origin
        XCTAssertEqual(firstHalf.cacheOutcome, .miss, "the v2 part replaced the v1 part")
        XCTAssertEqual(whole.cacheOutcome, .miss)
        XCTAssertEqual(whole.data, Data("01234ABCDE".utf8))
        XCTAssertEqual(origin.requests.count, 4)
    }
}
