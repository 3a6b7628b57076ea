import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import courier

/// How `courier get -z`, `--etag-compare` and `--etag-save` are read (the rules themselves are the
/// library's `ConditionalRequest`, tested in Tests/CourierTests/Downloads/ConditionalRequestTests.swift).
/// No disk, no clock, no sockets.
final class ConditionalFetchTests: XCTestCase {
    private func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
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
