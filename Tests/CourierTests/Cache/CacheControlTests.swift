import XCTest
@testable import Courier
import CourierSupport

/// `Cache-Control` and HTTP-date parsing: pure, table-driven (no clock, no disk, no sockets).
final class CacheControlTests: XCTestCase {
    func testMaxAgeReadingsTakeTheConservativeOneForMalformedValues() {
        let table: [(String, Int?)] = [
            ("max-age=3600", 3600),
            ("MaX-AgE=3600", 3600),
            ("max-age=\"3600\"", 3600),  // quoted-string form is allowed
            ("max-age=003600", 3600),
            ("max-age='3600'", 0),  // single quotes are not quoting
            ("max-age=3600.0", 0),
            ("max-age=3600.5", 0),
            ("max-age=a3600", 0),
            ("max-age=3600a", 0),
            ("max-age=-1", 0),
            ("max-age=", 0),
            ("max-age", 0),
            ("max-age =3600", nil),  // not a token: an unknown extension
            ("max-age= 3600", 0),
            ("max-age=2147483647", 2_147_483_647),
            ("max-age=2147483649", 2_147_483_648),
            ("max-age=99999999999999999999999", 2_147_483_648),
            ("max-age=1800, max-age=1", 1),  // differing duplicates: the smaller
            ("max-age=1, max-age=1800", 1),
            ("extension=\"max-age=3600\", max-age=1", 1),  // a quoted comma does not split
            ("max-age=1, extension=\"max-age=3600\"", 1),
            ("foo, bar=\"a,b\"", nil),
        ]
        for (value, expected) in table {
            XCTAssertEqual(CacheControl(value).maxAge, expected, value)
        }
    }

    func testDuplicatesOnSeparateLinesMergeLikeOneLine() {
        XCTAssertEqual(CacheControl(lines: ["max-age=1800", "max-age=1"]).maxAge, 1)
        XCTAssertTrue(CacheControl(lines: ["max-age=1800", "no-store"]).noStore)
    }

    func testFlagsAreCaseInsensitiveAndFieldListsAreRead() {
        let directives = CacheControl(
            "nO-StOrE, No-CaChE=\"Set-Cookie, X-Foo\", PRIVATE, public, must-revalidate, immutable, must-understand")
        XCTAssertTrue(directives.noStore)
        XCTAssertFalse(directives.noCache, "qualified no-cache is not the unqualified one")
        XCTAssertEqual(directives.noCacheFields, ["Set-Cookie", "X-Foo"])
        XCTAssertTrue(directives.isPrivate)
        XCTAssertTrue(directives.isPublic)
        XCTAssertTrue(directives.mustRevalidate)
        XCTAssertTrue(directives.immutable)
        XCTAssertTrue(directives.mustUnderstand)
        XCTAssertTrue(CacheControl("no-cache").noCache)
        XCTAssertTrue(CacheControl("no-cache=\"\"").noCache, "an empty field list is the unqualified form")
    }

    func testRequestDirectives() {
        let directives = CacheControl("max-stale, min-fresh=10, only-if-cached, stale-if-error=5")
        XCTAssertEqual(directives.maxStale, CacheControl.maximumDelta, "max-stale alone accepts any staleness")
        XCTAssertEqual(directives.minFresh, 10)
        XCTAssertTrue(directives.onlyIfCached)
        XCTAssertEqual(directives.staleIfError, 5)
        XCTAssertEqual(CacheControl("max-stale=abc").maxStale, 0)
        XCTAssertEqual(CacheControl("stale-while-revalidate=60").staleWhileRevalidate, 60)
    }

    func testEmptyAndGarbageInputParseToNothing() {
        for value in ["", ",,,", "=", "\"", "=5", "\"unterminated, max-age=5", "\u{0}"] {
            let directives = CacheControl(value)
            XCTAssertFalse(directives.noStore, value)
            XCTAssertFalse(directives.noCache, value)
        }
        XCTAssertNil(CacheControl("\"unterminated, max-age=5").maxAge, "inside an unterminated quote")
    }

    // MARK: - Fields

    func testSettingAFieldLeavesOneLineWhereTheFirstWas() {
        var headers = CacheHeaders([("Age", "5"), ("X", "1"), ("age", "5"), ("AGE", "7")])
        headers.set("Age", "9")
        XCTAssertEqual(headers.fields.map { "\($0.name)=\($0.value)" }, ["Age=9", "X=1"])
        headers.set("New", "v")
        XCTAssertEqual(headers["new"], "v")
        headers.remove("x")
        XCTAssertEqual(headers.fields.map(\.name), ["Age", "New"])
    }

    func testListsSplitOutsideQuotesAndNamesCompareWithoutCase() {
        XCTAssertEqual(CacheHeaders.splitList(" a , \"b,c\" ,, d\t"), ["a", "\"b,c\"", "d"])
        XCTAssertEqual(CacheHeaders.splitList("\"x\\\",y\", z"), ["\"x\\\",y\"", "z"])
        XCTAssertTrue(CacheHeaders.sameName("Cache-Control", "cache-CONTROL"))
        XCTAssertFalse(CacheHeaders.sameName("Cache-Control", "Cache-Contro1"))
        XCTAssertFalse(CacheHeaders.sameName("ETag", "ETags"))
    }

    // MARK: - HTTP dates

    func testTheThreeDateFormsParseToTheSameInstant() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), expected)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), expected)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), expected)
        XCTAssertEqual(HTTPDate.parse("sun, 06 nov 1994 08:49:37 gmt"), expected, "names in any case")
        XCTAssertEqual(HTTPDate.parse(" \tSun, 06 Nov 1994 08:49:37 GMT \t"), expected, "optional white space around the value")
        XCTAssertEqual(HTTPDate.parse("Sun Nov 16 08:49:37 1994"), expected.addingTimeInterval(10 * 86_400), "asctime, two-digit day")
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 01994 08:49:37 GMT"), expected, "a year of more than four digits")
    }

    func testMalformedDatesAreRefused() {
        for value in [
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 CET", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08.49.37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "0", "-1", "", "tomorrow",
            "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\r\n", "Sun, 06 Nov 1994 08:49:37  GMT", "Sun, 06 Nov 1994 08:49:37 GMTX",
            "Sun, 06 Nov 1994 08:49:37 \u{FF27}MT", "S\u{FF55}n, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:4:937 GMT",
            "Sun, 06 Nov 1994 08:49:3 GMT", "Sun, 06 Nov 1994  8:49:37 GMT", "Sun Nov 6 08:49:37 1994", "Sun Nov   6 08:49:37 1994",
            "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994\t08:49:37 GMT",
        ] {
            XCTAssertNil(HTTPDate.parse(value), value)
        }
    }

    func testFarFutureDatesParse() {
        XCTAssertEqual(HTTPDate.parse("Tue, 19 Jan 2038 03:14:07 GMT")?.timeIntervalSince1970, 2_147_483_647)
        XCTAssertEqual(HTTPDate.parse("Fri, 01 Jan 3000 00:00:00 GMT")?.timeIntervalSince1970, 32_503_680_000)
    }

    func testFormattingRoundTrips() {
        for seconds in [0, 784_111_777, 951_782_400, 2_147_483_647, 4_102_444_800] {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            XCTAssertEqual(HTTPDate.parse(HTTPDate.format(date)), date, HTTPDate.format(date))
        }
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
