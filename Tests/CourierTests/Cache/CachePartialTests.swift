import XCTest
@testable import Courier

/// Partial content as pure rules (RFC 9111 §3.3, §3.4, §4.3.5; RFC 9110 §14): which `Range` the
/// cache answers, what a stored response answers for it, and what storing a `206` keeps. Every
/// time is an argument; nothing touches a clock, a file or a socket.
final class CachePartialTests: XCTestCase {
    let url = URL(string: "http://example.test/file")!
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func request(_ headers: [(String, String)] = [], method: String = "GET", mode: CacheMode = .protocolPolicy) -> CacheRequest {
        CacheRequest(method: method, url: url, headers: CacheHeaders(headers), mode: mode)
    }

    func head(_ headers: [(String, String)], status: Int = 200, bodyLength: Int, responseTime: TimeInterval = 0) -> CacheEntryHead {
        CacheEntryHead(
            key: CachePolicy.key(for: url), url: url.absoluteString, status: status, headers: CacheHeaders(headers), vary: [],
            requestTime: t0.addingTimeInterval(responseTime), responseTime: t0.addingTimeInterval(responseTime), bodyLength: bodyLength)
    }

    func part(_ range: String, _ body: String, etag: String? = "\"v1\"", extra: [(String, String)] = []) -> CacheEntry {
        var fields = [("Cache-Control", "max-age=3600"), ("Content-Range", range)] + extra
        if let etag { fields.append(("ETag", etag)) }
        return CacheEntry(head: head(fields, status: 206, bodyLength: body.utf8.count), body: Data(body.utf8))
    }

    func decide(_ stored: [CacheEntryHead], _ request: CacheRequest, at offset: TimeInterval = 1) -> CacheDecision {
        CachePolicy.decide(request, candidates: stored, now: t0.addingTimeInterval(offset))
    }

    // MARK: - The Range field

    func testOneByteRangeIsParsedAndAnythingElseIsNot() {
        XCTAssertEqual(CacheByteRange.parse("bytes=0-1"), CacheByteRange(first: 0, last: 1))
        XCTAssertEqual(CacheByteRange.parse(" BYTES = 5- "), CacheByteRange(first: 5, last: nil))
        XCTAssertEqual(CacheByteRange.parse("bytes=-5"), CacheByteRange(suffixLength: 5))
        for refused in [
            "bytes=0-1,3-4", "items=0-1", "bytes=5-2", "bytes=-", "bytes=+1-2", "bytes=1 0-20", "bytes",
            "bytes=99999999999999999999-", "0-1",
        ] {
            XCTAssertNil(CacheByteRange.parse(refused), refused)
        }
    }

    func testARangeResolvesAgainstTheLengthAsRFC9110Says() {
        XCTAssertEqual(CacheByteRange(first: 0, last: 1).resolved(length: 11), 0...1)
        XCTAssertEqual(CacheByteRange(first: 1, last: nil).resolved(length: 11), 1...10)
        XCTAssertEqual(CacheByteRange(first: 3, last: 500).resolved(length: 11), 3...10, "a last position past the end is the end")
        XCTAssertEqual(CacheByteRange(suffixLength: 1).resolved(length: 11), 10...10)
        XCTAssertEqual(CacheByteRange(suffixLength: 50).resolved(length: 11), 0...10)
        XCTAssertNil(CacheByteRange(first: 11, last: nil).resolved(length: 11), "first at the end: unsatisfiable")
        XCTAssertNil(CacheByteRange(suffixLength: 0).resolved(length: 11))
        XCTAssertNil(CacheByteRange(first: 0, last: 0).resolved(length: 0), "nothing of an empty representation")
    }

    func testOnlyASingleRangeGetWithoutPreconditionsIsTheCachesBusiness() {
        XCTAssertNotNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1")])))
        XCTAssertNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1")], method: "HEAD")))
        XCTAssertNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1"), ("If-Range", "\"v1\"")])))
        XCTAssertNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1"), ("If-None-Match", "\"v1\"")])))
        XCTAssertNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1"), ("Range", "bytes=4-5")])))
        XCTAssertNil(CachePolicy.requestedRange(request([("Range", "bytes=0-1,4-5")])))
        XCTAssertNil(CachePolicy.requestedRange(request()))
    }

    // MARK: - Serving a range

    func testAFreshWholeResponseAnswersARangeWithA206OrA416() {
        let whole = head([("Cache-Control", "max-age=3600")], bodyLength: 11)
        XCTAssertEqual(
            decide([whole], request([("Range", "bytes=0-1")])),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 0-1/11", bodyRange: 0..<2), stale: false))
        XCTAssertEqual(
            decide([whole], request([("Range", "bytes=-1")])),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 10-10/11", bodyRange: 10..<11), stale: false))
        XCTAssertEqual(
            decide([whole], request([("Range", "bytes=1-")])),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 1-10/11", bodyRange: 1..<11), stale: false))
        XCTAssertEqual(
            decide([whole], request([("Range", "bytes=20-")])),
            .serveRange(0, CacheRangeAnswer(status: 416, contentRange: "bytes */11", bodyRange: 0..<0), stale: false))
    }

    func testAStaleOrEncodedOrOwnConditionedRangeRequestGoesToTheOrigin() {
        let stale = head([("Cache-Control", "max-age=10"), ("ETag", "\"v1\"")], bodyLength: 11)
        XCTAssertEqual(
            decide([stale], request([("Range", "bytes=0-1")]), at: 20), .forward(fallback: nil, why: "stale"),
            "not validated, no stale fallback: its 206 is stored as a part")
        let encoded = head([("Cache-Control", "max-age=3600"), ("Content-Encoding", "gzip")], bodyLength: 11)
        XCTAssertEqual(
            decide([encoded], request([("Range", "bytes=0-1")])), .forward(fallback: nil, why: "partial"),
            "stored bytes are decoded ones; ranges address encoded ones")
        let fresh = head([("Cache-Control", "max-age=3600")], bodyLength: 11)
        XCTAssertEqual(decide([fresh], request([("Range", "bytes=0-1,3-4")])), .forward(fallback: nil, why: "bypass"))
        XCTAssertEqual(decide([fresh], request([("Range", "bytes=0-1"), ("If-Range", "\"v1\"")])), .forward(fallback: nil, why: "bypass"))
        XCTAssertEqual(decide([], request([("Range", "bytes=0-1")])), .forward(fallback: nil, why: "uri-miss"))
        XCTAssertEqual(decide([], request([("Range", "bytes=0-1"), ("Cache-Control", "only-if-cached")])), .gatewayTimeout)
    }

    func testAStaleAnswerAcceptedByTheRequestAnswersItsRangeAsStale() {
        let stale = head([("Cache-Control", "max-age=10")], bodyLength: 11)
        XCTAssertEqual(
            decide([stale], request([("Range", "bytes=0-1"), ("Cache-Control", "max-stale=60")]), at: 20),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 0-1/11", bodyRange: 0..<2), stale: true))
    }

    func testAPartialEntryAnswersOnlyRangesInsideItAndNeverAWholeRequest() {
        let stored = part("bytes 4-9/10", "456789").head
        XCTAssertEqual(
            decide([stored], request([("Range", "bytes=6-8")])),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 6-8/10", bodyRange: 2..<5), stale: false))
        XCTAssertEqual(
            decide([stored], request([("Range", "bytes=-1")])),
            .serveRange(0, CacheRangeAnswer(status: 206, contentRange: "bytes 9-9/10", bodyRange: 5..<6), stale: false))
        XCTAssertEqual(decide([stored], request([("Range", "bytes=2-5")])), .forward(fallback: nil, why: "partial"), "outside the part")
        XCTAssertEqual(
            decide([stored], request([("Range", "bytes=10-")])), .forward(fallback: nil, why: "partial"),
            "unsatisfiable: the origin says so, not a part")
        XCTAssertEqual(decide([stored], request()), .forward(fallback: nil, why: "partial"), "a part is never a whole answer")
        XCTAssertEqual(decide([stored], request(method: "HEAD")), .forward(fallback: nil, why: "partial"))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "only-if-cached")])), .gatewayTimeout)
        XCTAssertEqual(decide([stored], request(mode: .returnCacheDontLoad)), .gatewayTimeout)
    }

    func testRangeHeadersCarryTheSlicesPlaceAndLength() {
        let served = CacheHeaders([("Content-Length", "11"), ("ETag", "\"v1\"")])
        let headers = CachePolicy.rangeHeaders(
            served, answer: CacheRangeAnswer(status: 206, contentRange: "bytes 0-1/11", bodyRange: 0..<2))
        XCTAssertEqual(headers.values("Content-Length"), ["2"])
        XCTAssertEqual(headers.values("Content-Range"), ["bytes 0-1/11"])
        XCTAssertEqual(headers["ETag"], "\"v1\"")
    }

    // MARK: - Storing and combining 206 answers

    func testA206IsKeptOnlyWithOneKnownRangeOfItsBodysSize() {
        XCTAssertEqual(
            CachePolicy.partialToStore(part("bytes 4-9/10", "456789").head, body: Data("456789".utf8), stored: nil)?.body,
            Data("456789".utf8))
        let liar = part("bytes 4-9/10", "01234")  // five bytes for a range of six
        XCTAssertNil(CachePolicy.partialToStore(liar.head, body: liar.body, stored: nil))
        let unknown = part("bytes 0-4/*", "01234")
        XCTAssertNil(CachePolicy.partialToStore(unknown.head, body: unknown.body, stored: nil))
        let encoded = part("bytes 0-4/10", "01234", extra: [("Content-Encoding", "gzip")])
        XCTAssertNil(CachePolicy.partialToStore(encoded.head, body: encoded.body, stored: nil))
    }

    func testA206CoveringTheWholeRepresentationIsStoredWhole() {
        let all = part("bytes 0-4/5", "01234", extra: [("Content-Length", "5")])
        let stored = CachePolicy.partialToStore(all.head, body: all.body, stored: nil)
        XCTAssertEqual(stored?.head.status, 200)
        XCTAssertNil(stored?.head.headers["Content-Range"])
        XCTAssertEqual(stored?.head.headers["Content-Length"], "5")
    }

    func testPartsWithTheSameStrongValidatorCombineIntoAWholeEntry() throws {
        let first = part("bytes 0-4/10", "01234", extra: [("X-Part", "1"), ("X-First", "kept")])
        let second = part("bytes 5-9/10", "56789", extra: [("X-Part", "2")])
        let whole = try XCTUnwrap(CachePolicy.partialToStore(second.head, body: second.body, stored: first))
        XCTAssertEqual(whole.head.status, 200, "two touching runs covering 10 bytes are the whole")
        XCTAssertEqual(whole.body, Data("0123456789".utf8))
        XCTAssertEqual(whole.head.bodyLength, 10)
        XCTAssertEqual(whole.head.headers["Content-Length"], "10")
        XCTAssertNil(whole.head.headers["Content-Range"])
        XCTAssertEqual(whole.head.headers.values("X-Part"), ["2"], "the new fields replace the stored ones (§3.4)")
        XCTAssertEqual(whole.head.headers["X-First"], "kept", "fields the new answer lacks stay")
    }

    func testOverlappingPartsCombineIntoOneLongerPart() throws {
        let first = part("bytes 2-5/20", "2345")
        let second = part("bytes 4-8/20", "45678")
        let combined = try XCTUnwrap(CachePolicy.partialToStore(second.head, body: second.body, stored: first))
        XCTAssertEqual(combined.head.status, 206)
        XCTAssertEqual(combined.body, Data("2345678".utf8))
        XCTAssertEqual(combined.head.headers["Content-Range"], "bytes 2-8/20")
        XCTAssertEqual(CachePolicy.partialExtent(combined.head), CacheExtent(range: 2...8, length: 20))
    }

    func testPartsAreNeverCombinedWithoutTheSameStrongValidator() {
        for (stored, incoming) in [
            ("W/\"v1\"", "W/\"v1\""),  // weak: the bytes may differ
            ("\"v1\"", "\"v2\""),  // another version
            (nil, nil) as (String?, String?),  // nothing to compare
            ("\"v1\"", nil),
        ] {
            let first = part("bytes 0-4/10", "01234", etag: stored)
            let second = part("bytes 5-9/10", "ABCDE", etag: incoming)
            let kept = CachePolicy.partialToStore(second.head, body: second.body, stored: first)
            XCTAssertEqual(kept?.head.status, 206, "\(String(describing: stored)) \(String(describing: incoming))")
            XCTAssertEqual(kept?.body, Data("ABCDE".utf8), "the newer part replaces the stored one, never mixed")
        }
    }

    func testDisjointOrDifferentlySizedPartsAreNotCombined() {
        let first = part("bytes 0-1/10", "01")
        let gap = part("bytes 5-9/10", "56789")
        XCTAssertEqual(CachePolicy.partialToStore(gap.head, body: gap.body, stored: first)?.body, Data("56789".utf8), "one run per entry")
        let otherLength = part("bytes 2-4/12", "234")
        XCTAssertEqual(CachePolicy.partialToStore(otherLength.head, body: otherLength.body, stored: first)?.body, Data("234".utf8))
    }

    func testAStoredWholeResponseWithTheSameStrongValidatorIsKept() {
        let whole = CacheEntry(
            head: head([("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")], bodyLength: 10), body: Data("0123456789".utf8))
        let same = part("bytes 0-4/10", "01234")
        XCTAssertNil(CachePolicy.partialToStore(same.head, body: same.body, stored: whole), "it holds every byte already")
        let other = part("bytes 0-4/10", "ABCDE", etag: "\"v2\"")
        XCTAssertEqual(
            CachePolicy.partialToStore(other.head, body: other.body, stored: whole)?.head.status, 206, "a newer version replaces it")
    }
}
