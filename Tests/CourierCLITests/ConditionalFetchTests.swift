import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import courier

/// The pure decisions behind `courier get -z`, `--etag-compare` and `--etag-save`: dates read as
/// curl reads them, what goes into the request, and what is saved. No disk, no clock, no sockets.
final class ConditionalFetchTests: XCTestCase {
    private func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
    }

    func testTheThreeHTTPDateFormsReadAsTheSameInstant() {
        let expected = date(1994, 11, 6, 8, 49, 37)
        XCTAssertEqual(ConditionalFetch.parseDate("Sun, 06 Nov 1994 08:49:37 GMT"), expected)
        XCTAssertEqual(ConditionalFetch.parseDate("Sunday, 06-Nov-94 08:49:37 GMT"), expected)
        XCTAssertEqual(ConditionalFetch.parseDate("Sun Nov  6 08:49:37 1994"), expected)
    }

    func testCurlsExamplesAndISODatesRead() {
        XCTAssertEqual(ConditionalFetch.parseDate("Wed 01 Sep 2021 12:18:00"), date(2021, 9, 1, 12, 18))
        XCTAssertEqual(ConditionalFetch.parseDate("Jan 10, 2017"), date(2017, 1, 10))
        XCTAssertEqual(ConditionalFetch.parseDate("Sun, 12 Sep 2004 15:05:58 -0700"), date(2004, 9, 12, 22, 5, 58))
        XCTAssertEqual(ConditionalFetch.parseDate("2021-09-01"), date(2021, 9, 1))
        XCTAssertEqual(ConditionalFetch.parseDate("2021-09-01T12:18:00Z"), date(2021, 9, 1, 12, 18))
        XCTAssertEqual(ConditionalFetch.parseDate("2021-09-01 12:18:00+02:00"), date(2021, 9, 1, 10, 18))
        XCTAssertEqual(ConditionalFetch.parseDate("20210901"), date(2021, 9, 1))
        XCTAssertEqual(ConditionalFetch.parseDate("1 September 2021"), date(2021, 9, 1))
    }

    func testWhatIsNotADateIsNil() {
        for text in [
            "", "index.html", "Feb 30 2021", "2021-13-01", "Sun, 06 Nov 1994 25:00:00 GMT", "12:00", "Nov 1994",
            "06 Nov 1994 08:49:37 XYZ", "1 2 3 4",
        ] {
            XCTAssertNil(ConditionalFetch.parseDate(text), text)
        }
    }

    func testHTTPDateIsAnIMFFixdateThatReadsBack() {
        let instant = date(2015, 10, 21, 7, 28)
        XCTAssertEqual(ConditionalFetch.httpDate(instant), "Wed, 21 Oct 2015 07:28:00 GMT")
        XCTAssertEqual(ConditionalFetch.parseDate(ConditionalFetch.httpDate(instant)), instant)
    }

    func testTimeCondIsIfModifiedSinceUnlessItStartsWithADash() {
        let never: (String) -> Date? = { _ in
            XCTFail("a date is not a file"); return nil
        }
        XCTAssertEqual(ConditionalFetch.timeCondition("Jan 10, 2017", fileTime: never).0, .modifiedSince(date(2017, 1, 10)))
        XCTAssertEqual(ConditionalFetch.timeCondition("+Jan 10, 2017", fileTime: never).0, .modifiedSince(date(2017, 1, 10)))
        XCTAssertEqual(ConditionalFetch.timeCondition("-Jan 10, 2017", fileTime: never).0, .unmodifiedSince(date(2017, 1, 10)))
    }

    func testTimeCondThatIsNoDateTakesTheFilesTimeOrWarnsAndDropsTheCondition() {
        let mtime = date(2020, 2, 2)
        let files = { (path: String) in path == "saved.html" ? mtime : nil }
        XCTAssertEqual(ConditionalFetch.timeCondition("saved.html", fileTime: files).0, .modifiedSince(mtime))
        XCTAssertEqual(ConditionalFetch.timeCondition("-saved.html", fileTime: files).0, .unmodifiedSince(mtime))
        let (none, warning) = ConditionalFetch.timeCondition("missing.html", fileTime: files)
        XCTAssertNil(none)
        XCTAssertEqual(warning, "-z 'missing.html' is neither a date nor an existing file; downloading without a time condition")
    }

    func testTheConditionsBecomeRequestHeaders() {
        var fetch = ConditionalFetch()
        XCTAssertFalse(fetch.isConditional)
        XCTAssertTrue(fetch.headers.isEmpty)
        fetch.time = .unmodifiedSince(date(2010, 1, 1))
        fetch.ifNoneMatch = "\"v1\""
        XCTAssertTrue(fetch.isConditional)
        XCTAssertEqual(
            fetch.headers.map { "\($0.name): \($0.value)" },
            ["If-Unmodified-Since: Fri, 01 Jan 2010 00:00:00 GMT", "If-None-Match: \"v1\""])
        XCTAssertEqual(ConditionalFetch(time: .modifiedSince(date(2010, 1, 1))).headers.map(\.name), ["If-Modified-Since"])
    }

    func testAnEtagFileGivesItsFirstLineAndAMissingOrEmptyOneAnEmptyETag() {
        XCTAssertEqual(ConditionalFetch.ifNoneMatch(fromFile: "\"abc\"\n"), "\"abc\"")
        XCTAssertEqual(ConditionalFetch.ifNoneMatch(fromFile: "  W/\"abc\"  \r\nsecond line\n"), "W/\"abc\"")
        XCTAssertEqual(ConditionalFetch.ifNoneMatch(fromFile: ""), "\"\"")
        XCTAssertEqual(ConditionalFetch.ifNoneMatch(fromFile: "\n"), "\"\"")
        XCTAssertEqual(ConditionalFetch.ifNoneMatch(fromFile: nil), "\"\"")
    }

    func testCurlsOwnTimeCheckSkipsABodyTheServerSentDespiteTheCondition() {
        let since = ConditionalFetch.TimeCondition.modifiedSince(date(2015, 10, 21, 7, 28))
        XCTAssertFalse(ConditionalFetch.meets(since, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"), "not newer")
        XCTAssertTrue(ConditionalFetch.meets(since, lastModified: "Wed, 21 Oct 2015 07:28:01 GMT"))
        let unmodified = ConditionalFetch.TimeCondition.unmodifiedSince(date(2015, 10, 21, 7, 28))
        XCTAssertFalse(ConditionalFetch.meets(unmodified, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"), "not older")
        XCTAssertTrue(ConditionalFetch.meets(unmodified, lastModified: "Wed, 21 Oct 2015 07:27:59 GMT"))
        XCTAssertTrue(ConditionalFetch.meets(since, lastModified: nil), "nothing to compare: the body is taken")
        XCTAssertTrue(ConditionalFetch.meets(since, lastModified: "yesterday"))
    }

    func testTheSavedETagComesFrom2xxAnd3xxResponsesOnly() {
        let url = URL(string: "http://127.0.0.1/x")!
        func response(_ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        }
        XCTAssertEqual(ConditionalFetch.savedETag(from: response(200, ["ETag": "\"v1\""])), "\"v1\"\n")
        XCTAssertEqual(ConditionalFetch.savedETag(from: response(304, ["ETag": " W/\"v2\" "])), "W/\"v2\"\n")
        XCTAssertNil(ConditionalFetch.savedETag(from: response(404, ["ETag": "\"v1\""])))
        XCTAssertNil(ConditionalFetch.savedETag(from: response(200, [:])))
        XCTAssertNil(ConditionalFetch.savedETag(from: nil))
    }

    func testTheOptionsParseAndTheirMistakesAreUsageErrors() throws {
        let options = try XCTUnwrap(
            GetCommand.Options.parse(
                ["http://h/x", "-z", "-Jan 10, 2017", "--etag-compare", "e.txt", "--etag-save", "e.txt"]))
        XCTAssertEqual(options.timeCondition, "-Jan 10, 2017")
        XCTAssertEqual(options.etagCompare, "e.txt")
        XCTAssertEqual(options.etagSave, "e.txt")
        XCTAssertEqual(try GetCommand.Options.parse(["http://h/x", "--time-cond=a.html", "-z", "b.html"])?.timeCondition, "b.html")
        for arguments in [["--etag-save", "-"], ["--etag-compare", ""], ["-z", "-"]] {
            XCTAssertThrowsError(try GetCommand.Options.parse(["http://h/x"] + arguments), "\(arguments)")
        }
        XCTAssertThrowsError(try GetCommand.Invocation.parse(["-i", "list.txt", "--etag-save", "e.txt"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "--etag-save is for one URL; -i does not take it")
        }
    }
}
