import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// `ConditionalRequest`'s pure decisions (curl's `-z`, `--etag-compare`, `--etag-save`): dates read
/// as curl reads them, what goes into the request, what is saved. No disk, no clock, no sockets.
final class ConditionalRequestTests: XCTestCase {
    private func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
    }

    func testTheThreeHTTPDateFormsReadAsTheSameInstant() {
        let expected = date(1994, 11, 6, 8, 49, 37)
        XCTAssertEqual(ConditionalRequest.date("Sun, 06 Nov 1994 08:49:37 GMT"), expected)
        XCTAssertEqual(ConditionalRequest.date("Sunday, 06-Nov-94 08:49:37 GMT"), expected)
        XCTAssertEqual(ConditionalRequest.date("Sun Nov  6 08:49:37 1994"), expected)
    }

    func testCurlsExamplesAndISODatesRead() {
        XCTAssertEqual(ConditionalRequest.date("Wed 01 Sep 2021 12:18:00"), date(2021, 9, 1, 12, 18))
        XCTAssertEqual(ConditionalRequest.date("Jan 10, 2017"), date(2017, 1, 10))
        XCTAssertEqual(ConditionalRequest.date("Sun, 12 Sep 2004 15:05:58 -0700"), date(2004, 9, 12, 22, 5, 58))
        XCTAssertEqual(ConditionalRequest.date("2021-09-01"), date(2021, 9, 1))
        XCTAssertEqual(ConditionalRequest.date("2021-09-01T12:18:00Z"), date(2021, 9, 1, 12, 18))
        XCTAssertEqual(ConditionalRequest.date("2021-09-01 12:18:00+02:00"), date(2021, 9, 1, 10, 18))
        XCTAssertEqual(ConditionalRequest.date("20210901"), date(2021, 9, 1))
        XCTAssertEqual(ConditionalRequest.date("1 September 2021"), date(2021, 9, 1))
    }

    func testWhatIsNotADateIsNil() {
        for text in [
            "", "index.html", "Feb 30 2021", "2021-13-01", "Sun, 06 Nov 1994 25:00:00 GMT", "12:00", "Nov 1994",
            "06 Nov 1994 08:49:37 XYZ", "1 2 3 4",
        ] {
            XCTAssertNil(ConditionalRequest.date(text), text)
        }
    }

    func testHTTPDateIsAnIMFFixdateThatReadsBack() {
        let instant = date(2015, 10, 21, 7, 28)
        XCTAssertEqual(HTTPDate.format(instant), "Wed, 21 Oct 2015 07:28:00 GMT")
        XCTAssertEqual(ConditionalRequest.date(HTTPDate.format(instant)), instant)
    }

    func testTheConditionsBecomeRequestHeaders() {
        var fetch = ConditionalRequest()
        XCTAssertFalse(fetch.isConditional)
        XCTAssertTrue(fetch.headers.isEmpty)
        fetch.time = .unmodifiedSince(date(2010, 1, 1))
        fetch.ifNoneMatch = "\"v1\""
        XCTAssertTrue(fetch.isConditional)
        XCTAssertEqual(
            fetch.headers.map { "\($0.name): \($0.value)" },
            ["If-Unmodified-Since: Fri, 01 Jan 2010 00:00:00 GMT", "If-None-Match: \"v1\""])
        XCTAssertEqual(ConditionalRequest(time: .modifiedSince(date(2010, 1, 1))).headers.map(\.name), ["If-Modified-Since"])
    }

    func testAnEtagFileGivesItsFirstLineAndAMissingOrEmptyOneAnEmptyETag() {
        XCTAssertEqual(ConditionalRequest.entityTag(fromFile: "\"abc\"\n"), "\"abc\"")
        XCTAssertEqual(ConditionalRequest.entityTag(fromFile: "  W/\"abc\"  \r\nsecond line\n"), "W/\"abc\"")
        XCTAssertEqual(ConditionalRequest.entityTag(fromFile: ""), "\"\"")
        XCTAssertEqual(ConditionalRequest.entityTag(fromFile: "\n"), "\"\"")
        XCTAssertEqual(ConditionalRequest.entityTag(fromFile: nil), "\"\"")
    }

    func testCurlsOwnTimeCheckSkipsABodyTheServerSentDespiteTheCondition() {
        let since = ConditionalRequest.TimeCondition.modifiedSince(date(2015, 10, 21, 7, 28))
        XCTAssertFalse(ConditionalRequest.meets(since, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"), "not newer")
        XCTAssertTrue(ConditionalRequest.meets(since, lastModified: "Wed, 21 Oct 2015 07:28:01 GMT"))
        let unmodified = ConditionalRequest.TimeCondition.unmodifiedSince(date(2015, 10, 21, 7, 28))
        XCTAssertFalse(ConditionalRequest.meets(unmodified, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"), "not older")
        XCTAssertTrue(ConditionalRequest.meets(unmodified, lastModified: "Wed, 21 Oct 2015 07:27:59 GMT"))
        XCTAssertTrue(ConditionalRequest.meets(since, lastModified: nil), "nothing to compare: the body is taken")
        XCTAssertTrue(ConditionalRequest.meets(since, lastModified: "yesterday"))
    }

    func testTheSavedETagComesFrom2xxAnd3xxResponsesOnly() {
        let url = URL(string: "http://127.0.0.1/x")!
        func response(_ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        }
        XCTAssertEqual(ConditionalRequest.entityTagLine(from: response(200, ["ETag": "\"v1\""])), "\"v1\"\n")
        XCTAssertEqual(ConditionalRequest.entityTagLine(from: response(304, ["ETag": " W/\"v2\" "])), "W/\"v2\"\n")
        XCTAssertNil(ConditionalRequest.entityTagLine(from: response(404, ["ETag": "\"v1\""])))
        XCTAssertNil(ConditionalRequest.entityTagLine(from: response(200, [:])))
        XCTAssertNil(ConditionalRequest.entityTagLine(from: nil))
    }
}
