import XCTest

@testable import Courier

/// The one rule for which response value backs `If-Range` (StrongValidator.swift), without sockets.
final class StrongValidatorTests: XCTestCase {
    private let date = "Wed, 21 Oct 2015 07:28:00 GMT"

    func testAQuotedStrongETagIsKeptAsItCame() {
        XCTAssertEqual(StrongValidator.of(etag: "\"v1\"", lastModified: date, contentEncoding: nil), "\"v1\"")
    }

    func testABareETagIsKeptAsItCame() {
        XCTAssertEqual(StrongValidator.of(etag: "v1-abc", lastModified: date, contentEncoding: nil), "v1-abc")
        XCTAssertEqual(
            StrongValidator.of(etag: "d41d8cd98f00b204e9800998ecf8427e", lastModified: nil, contentEncoding: nil),
            "d41d8cd98f00b204e9800998ecf8427e")
    }

    func testAWeakETagFallsBackToLastModified() {
        XCTAssertEqual(StrongValidator.of(etag: "W/\"v1\"", lastModified: date, contentEncoding: nil), date)
        XCTAssertEqual(StrongValidator.of(etag: "W/v1", lastModified: nil, contentEncoding: nil), nil)
    }

    func testAMalformedETagIsNotAValidator() {
        // A space, a quote inside, an unclosed quote, an empty value, a control character
        for etag in ["v1 v2", "v\"1", "\"v1", "\"v\"1\"", "", "  ", "v1\u{7}"] {
            XCTAssertEqual(StrongValidator.of(etag: etag, lastModified: date, contentEncoding: nil), date, etag.debugDescription)
        }
    }

    func testAnEncodedBodyHasNoValidator() {
        XCTAssertNil(StrongValidator.of(etag: "\"v1\"", lastModified: date, contentEncoding: "gzip"))
    }

    func testAKeptValidatorIsAnEntityTagOrADate() {
        XCTAssertTrue(StrongValidator.isEntityTag("\"v1\""))
        XCTAssertTrue(StrongValidator.isEntityTag("v1-abc"))
        XCTAssertFalse(StrongValidator.isEntityTag(date))
    }

    func testA206CarryingAnotherBareTagIsAnotherVersion() {
        let answer = RangeContinuation.Answer(
            status: 206, contentRange: "bytes 100-199/200", contentLength: 100, etag: "v2", lastModified: nil)
        guard case .restartWithoutRange = RangeContinuation.decide(offset: 100, knownTotal: 200, validator: "v1", answer: answer) else {
            return XCTFail("a 206 with another tag was appended")
        }
        let same = RangeContinuation.Answer(
            status: 206, contentRange: "bytes 100-199/200", contentLength: 100, etag: "v1", lastModified: nil)
        XCTAssertEqual(RangeContinuation.decide(offset: 100, knownTotal: 200, validator: "v1", answer: same), .append(end: 200))
    }
}

extension StrongValidatorTests {
    func testBlanksAroundATagAreDropped() {
        XCTAssertEqual(StrongValidator.of(etag: " \"v1\"\t", lastModified: nil, contentEncoding: nil), "\"v1\"")
        XCTAssertEqual(StrongValidator.of(etag: " v1 ", lastModified: nil, contentEncoding: nil), "v1")
    }
}
