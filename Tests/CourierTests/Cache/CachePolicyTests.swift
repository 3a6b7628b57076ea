import XCTest
@testable import Courier
import CourierSupport

/// The rules of RFC 9111 as pure functions: every time is an argument (`t0` is when the stored
/// response arrived), nothing touches a clock, a file or a socket.
final class CachePolicyTests: XCTestCase {
    let url = URL(string: "http://example.test/a?b=1")!
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func date(_ offset: TimeInterval) -> String { HTTPDate.format(t0.addingTimeInterval(offset)) }

    func request(_ headers: [(String, String)] = [], method: String = "GET", mode: CacheMode = .protocolPolicy) -> CacheRequest {
        CacheRequest(method: method, url: url, headers: CacheHeaders(headers), mode: mode)
    }

    func head(
        _ headers: [(String, String)], status: Int = 200, for request: CacheRequest? = nil, requestTime: TimeInterval = 0,
        responseTime: TimeInterval = 0
    ) -> CacheEntryHead {
        let fields = CacheHeaders(headers)
        let names = CachePolicy.varyNames(fields) ?? []
        return CacheEntryHead(
            key: CachePolicy.key(for: url), url: url.absoluteString, status: status, headers: fields,
            vary: CachePolicy.varyValues(names: names, request: request ?? self.request()),
            requestTime: t0.addingTimeInterval(requestTime), responseTime: t0.addingTimeInterval(responseTime),
            bodyLength: 0)
    }

    func decide(_ stored: [CacheEntryHead], _ request: CacheRequest? = nil, at offset: TimeInterval) -> CacheDecision {
        CachePolicy.decide(request ?? self.request(), candidates: stored, now: t0.addingTimeInterval(offset))
    }

    func storable(_ headers: [(String, String)], status: Int = 200, request: CacheRequest? = nil) -> Bool {
        CachePolicy.isStorable(
            request: request ?? self.request(), response: CacheResponseHead(status: status, headers: CacheHeaders(headers)))
    }

    // MARK: - Storing

    func testStorabilityByStatusAndDirectives() {
        XCTAssertTrue(storable([]), "200 is heuristically cacheable")
        XCTAssertTrue(storable([], status: 404))
        XCTAssertTrue(storable([], status: 410))
        XCTAssertFalse(storable([], status: 302), "302 needs explicit freshness")
        XCTAssertTrue(storable([("Cache-Control", "max-age=60")], status: 302))
        XCTAssertTrue(storable([("Expires", date(60))], status: 307))
        XCTAssertTrue(storable([("Cache-Control", "max-age=60")], status: 500))
        XCTAssertFalse(storable([], status: 500))
        XCTAssertTrue(storable([("Cache-Control", "private")], status: 503), "private: a private cache may store it")
        XCTAssertTrue(storable([("Cache-Control", "public")], status: 303))
        XCTAssertFalse(
            storable([("Cache-Control", "max-age=60")], status: 206), "a 206 is stored as a part, never as a whole (CachePartialTests)")
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], status: 304))
        XCTAssertFalse(storable([("Cache-Control", "no-store, max-age=60"), ("Expires", date(60))]))
        XCTAssertFalse(storable([("Cache-Control", "nO-StOrE")]))
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], request: request([("Cache-Control", "no-store")])))
        XCTAssertTrue(storable([("Cache-Control", "no-cache")]), "no-cache is stored and validated on use")
    }

    func testMustUnderstandOverridesNoStoreOnlyForUnderstoodStatuses() {
        XCTAssertTrue(storable([("Cache-Control", "no-store, must-understand, max-age=60")], status: 200))
        XCTAssertFalse(storable([("Cache-Control", "no-store, must-understand, max-age=60")], status: 299))
    }

    func testOnlyGetIsStoredAndCallerConditionsBypass() {
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], request: request(method: "POST")))
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], request: request(method: "HEAD")))
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], request: request([("Range", "bytes=0-1")])))
        XCTAssertFalse(storable([("Cache-Control", "max-age=60")], request: request([("If-None-Match", "\"a\"")])))
    }

    func testAuthorizationDoesNotPreventStoringInAPrivateCache() {
        XCTAssertTrue(storable([("Cache-Control", "max-age=60")], request: request([("Authorization", "Bearer x")])))
    }

    func testVaryStarIsNeverStoredWhateverItsForm() {
        for vary in ["*", "*, *", ", *", "*, Foo", "Foo, *"] {
            XCTAssertFalse(storable([("Cache-Control", "max-age=60"), ("Vary", vary)]), vary)
        }
        XCTAssertFalse(storable([("Cache-Control", "max-age=60"), ("Vary", "Foo"), ("Vary", "*")]))
    }

    func testHopByHopAndConnectionListedFieldsAreNeverStored() {
        let headers = CacheHeaders([
            ("Connection", "a, B"), ("a", "1"), ("b", "2"), ("c", "3"), ("Keep-Alive", "x"), ("Transfer-Encoding", "chunked"),
            ("Proxy-Authenticate", "Basic"), ("Upgrade", "h2c"), ("TE", "trailers"), ("Proxy-Connection", "x"),
            ("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2"), ("Cache-Control", "no-cache=\"X-Secret\""), ("X-Secret", "s"),
        ])
        let stored = CachePolicy.storedHeaders(headers)
        XCTAssertEqual(stored.fields.map(\.name), ["c", "Set-Cookie", "Set-Cookie", "Cache-Control"])
        XCTAssertEqual(stored.values("Set-Cookie"), ["a=1; Path=/", "b=2"], "Set-Cookie is kept as received")
    }

    func testFieldsWithNothingToDropAreKeptAsTheyAre() {
        let headers = CacheHeaders([("Content-Type", "text/plain"), ("cache-control", "max-age=5"), ("ETag", "\"a\"")])
        XCTAssertEqual(CachePolicy.storedHeaders(headers), headers)
        XCTAssertEqual(CachePolicy.storedHeaders(CacheHeaders([("CONNECTION", "close"), ("x", "1")])).fields.map(\.name), ["x"])
    }

    func testAnEntrysDirectivesFollowItsFieldsAcrossChangesAndTheDisk() throws {
        // Given an entry whose Cache-Control was parsed when it was made
        var stored = head([("Cache-Control", "max-age=60, must-revalidate")])
        XCTAssertEqual(stored.directives.maxAge, 60)
        XCTAssertTrue(stored.directives.mustRevalidate)
        // When its fields change, then its directives follow
        stored.headers.set("Cache-Control", "no-cache")
        XCTAssertNil(stored.directives.maxAge)
        XCTAssertTrue(stored.directives.noCache)
        // And read back from its stored form they are parsed again, not lost
        let decoded = try JSONDecoder().decode(CacheEntryHead.self, from: JSONEncoder().encode(stored))
        XCTAssertEqual(decoded, stored)
        XCTAssertTrue(decoded.directives.noCache)
    }

    // MARK: - Freshness and age

    func testFreshnessLifetimeTable() {
        let table: [([(String, String)], Int, TimeInterval)] = [
            ([("Cache-Control", "max-age=60")], 200, 60),
            ([("Cache-Control", "max-age=60"), ("Expires", date(-100))], 200, 60),  // max-age wins over a past Expires
            ([("Cache-Control", "max-age=60"), ("Expires", "0")], 200, 60),
            ([("Cache-Control", "max-age=0"), ("Expires", date(100))], 200, 0),
            ([("Cache-Control", "s-maxage=3600, max-age=1")], 200, 1),  // a private cache ignores s-maxage
            ([("Cache-Control", "s-maxage=3600")], 200, 0),
            ([("Date", date(0)), ("Expires", date(100))], 200, 100),
            ([("Date", date(0)), ("Expires", date(-100))], 200, 0),
            ([("Date", date(0)), ("Expires", date(0))], 200, 0),
            ([("Date", date(0)), ("Expires", "0")], 200, 0),  // invalid Expires: already expired
            ([("Date", date(0)), ("Expires", "Sun, 06 Nov 1994 08:49:37 UTC")], 200, 0),
            ([("Date", "garbage"), ("Expires", date(100))], 200, 100),  // a bad Date: the response time
            ([("Date", date(0)), ("Expires", date(100)), ("Expires", date(200))], 200, 0),  // two lines: invalid
            ([("Date", date(0)), ("Last-Modified", date(-1000))], 200, 100),  // heuristic: 10 %
            ([("Date", date(0)), ("Last-Modified", date(-1000))], 404, 100),
            ([("Date", date(0)), ("Last-Modified", date(-1000))], 302, 0),  // not heuristically cacheable
            ([("Date", date(0)), ("Last-Modified", date(-1000)), ("Cache-Control", "public")], 302, 100),
            ([("Date", date(0)), ("Last-Modified", date(1000))], 200, 0),  // a future Last-Modified: none
            ([("Date", date(0)), ("Last-Modified", "yesterday")], 200, 0),
            ([], 200, 0),
        ]
        for (index, (headers, status, expected)) in table.enumerated() {
            XCTAssertEqual(CachePolicy.freshnessLifetime(head(headers, status: status)), expected, "row \(index): \(headers)")
        }
    }

    func testCurrentAgeFollowsSection423() {
        // Sent at -2, arrived at 0, Date 5 s before arrival, Age 3: corrected initial age is
        // max(apparent 5, 3 + delay 2) = 5; 10 s later it is 15.
        let stored = head([("Date", date(-5)), ("Age", "3")], requestTime: -2)
        XCTAssertEqual(CachePolicy.currentAge(stored, now: t0.addingTimeInterval(10)), 15)
        // A large Age dominates the apparent age.
        let aged = head([("Date", date(0)), ("Age", "100")], requestTime: -1)
        XCTAssertEqual(CachePolicy.currentAge(aged, now: t0), 101)
        // A Date in the future (a fast clock) gives no negative age.
        XCTAssertEqual(CachePolicy.currentAge(head([("Date", date(50))]), now: t0), 0)
    }

    func testAgeParsingIgnoresWhatIsNotDigitsAndUsesTheFirstValue() {
        let table: [(String, TimeInterval)] = [
            ("10", 10), ("abc", 0), ("-10", 0), ("1.5", 0), ("2147483647", 2_147_483_647), ("2147483649", 2_147_483_648),
            ("7200, 0", 7200), ("0, 7200", 0), ("0, 0", 0), ("", 0), (" 5 ", 5),
        ]
        for (value, expected) in table {
            XCTAssertEqual(CachePolicy.ageValue(CacheHeaders([("Age", value)])), expected, value)
        }
        XCTAssertEqual(CachePolicy.ageValue(CacheHeaders([("Age", "7200"), ("Age", "0")])), 7200, "the first line")
    }

    // MARK: - Decisions

    func testFreshIsServedAndStaleIsValidatedOrForwarded() {
        let fresh = head([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])
        XCTAssertEqual(decide([fresh], at: 59), .serve(0))
        XCTAssertEqual(decide([fresh], at: 60), .validate(0, conditions: [.init(name: "If-None-Match", value: "\"v1\"")]))
        let noValidator = head([("Cache-Control", "max-age=60")])
        XCTAssertEqual(decide([noValidator], at: 61), .forward(fallback: 0, why: "stale"))
        XCTAssertEqual(decide([], at: 0), .forward(fallback: nil, why: "uri-miss"))
    }

    func testAnAgeAboveTheLifetimeIsStaleAtOnce() {
        XCTAssertEqual(decide([head([("Cache-Control", "max-age=60"), ("Age", "120")])], at: 0), .forward(fallback: 0, why: "stale"))
        XCTAssertEqual(
            decide([head([("Date", date(0)), ("Expires", date(60)), ("Age", "120")])], at: 0), .forward(fallback: 0, why: "stale"))
    }

    func testRequestMaxAgeMinFreshAndMaxStale() {
        let stored = head([("Cache-Control", "max-age=100")])
        XCTAssertEqual(decide([stored], request([("Cache-Control", "max-age=0")]), at: 10), .forward(fallback: 0, why: "stale"))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "max-age=20")]), at: 10), .serve(0))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "min-fresh=95")]), at: 10), .forward(fallback: 0, why: "stale"))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "min-fresh=50")]), at: 10), .serve(0))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "max-stale=50")]), at: 130), .serveStale(0, revalidate: false))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "max-stale=10")]), at: 130), .forward(fallback: 0, why: "stale"))
        XCTAssertEqual(decide([stored], request([("Cache-Control", "max-stale")]), at: 100_000), .serveStale(0, revalidate: false))
    }

    func testMustRevalidateForbidsStaleEvenWhenTheClientAccepts() {
        let stored = head([("Cache-Control", "max-age=10, must-revalidate"), ("ETag", "\"x\"")])
        XCTAssertEqual(decide([stored], at: 5), .serve(0))
        XCTAssertEqual(
            decide([stored], request([("Cache-Control", "max-stale")]), at: 20),
            .validate(0, conditions: [.init(name: "If-None-Match", value: "\"x\"")]))
        XCTAssertFalse(CachePolicy.mayServeStale(stored, request: request(), after: .transport, now: t0.addingTimeInterval(20)))
    }

    func testNoCacheRequestAndPragmaValidate() {
        let stored = head([("Cache-Control", "max-age=100"), ("Last-Modified", date(-100))])
        let validation = CacheDecision.validate(0, conditions: [.init(name: "If-Modified-Since", value: date(-100))])
        XCTAssertEqual(decide([stored], request([("Cache-Control", "no-cache")]), at: 1), validation)
        XCTAssertEqual(decide([stored], request([("Pragma", "no-cache")]), at: 1), validation)
        XCTAssertEqual(decide([stored], request([("Pragma", "unknown-extension")]), at: 1), .serve(0))
        XCTAssertEqual(
            decide([stored], request([("Pragma", "no-cache"), ("Cache-Control", "max-age=1000")]), at: 1), .serve(0),
            "Pragma is ignored when Cache-Control is present")
        XCTAssertEqual(decide([stored], request([("Cache-Control", "no-store")]), at: 1), .forward(fallback: nil, why: "request"))
    }

    func testResponseNoCacheIsValidatedOnEveryUseAndPragmaInAResponseMeansNothing() {
        let stored = head([("Cache-Control", "no-cache, max-age=3600"), ("ETag", "\"e\"")])
        XCTAssertEqual(decide([stored], at: 1), .validate(0, conditions: [.init(name: "If-None-Match", value: "\"e\"")]))
        XCTAssertEqual(decide([head([("Cache-Control", "max-age=3600"), ("Pragma", "no-cache")])], at: 1), .serve(0))
    }

    func testOnlyIfCachedAnswers504WithoutAUsableResponse() {
        let onlyCached = request([("Cache-Control", "only-if-cached")])
        XCTAssertEqual(decide([], onlyCached, at: 0), .gatewayTimeout)
        XCTAssertEqual(decide([head([("Cache-Control", "max-age=10")])], onlyCached, at: 1), .serve(0))
        XCTAssertEqual(decide([head([("Cache-Control", "max-age=10"), ("ETag", "\"e\"")])], onlyCached, at: 11), .gatewayTimeout)
        XCTAssertEqual(decide([], request(mode: .returnCacheDontLoad), at: 0), .gatewayTimeout)
    }

    func testDarwinCachePolicies() {
        let stored = head([("Cache-Control", "max-age=10"), ("ETag", "\"e\"")])
        XCTAssertEqual(decide([stored], request(mode: .reloadIgnoringCache), at: 1), .forward(fallback: nil, why: "request"))
        XCTAssertEqual(
            decide([stored], request(mode: .reloadRevalidating), at: 1),
            .validate(0, conditions: [.init(name: "If-None-Match", value: "\"e\"")]))
        XCTAssertEqual(decide([stored], request(mode: .returnCacheElseLoad), at: 1000), .serveStale(0, revalidate: false))
        XCTAssertEqual(decide([stored], request(mode: .returnCacheDontLoad), at: 1), .serve(0))
        XCTAssertEqual(decide([], request(mode: .returnCacheElseLoad), at: 1), .forward(fallback: nil, why: "uri-miss"))
    }

    func testStaleWhileRevalidateWindow() {
        let stored = head([("Cache-Control", "max-age=1, stale-while-revalidate=4"), ("ETag", "\"abc\"")])
        XCTAssertEqual(decide([stored], at: 3), .serveStale(0, revalidate: true))
        XCTAssertEqual(decide([stored], at: 6), .validate(0, conditions: [.init(name: "If-None-Match", value: "\"abc\"")]))
    }

    func testStaleIfErrorAndDisconnectedServing() {
        let now = t0.addingTimeInterval(10)
        let sie = head([("Cache-Control", "max-age=2, stale-if-error=60")])
        XCTAssertTrue(CachePolicy.mayServeStale(sie, request: request(), after: .status(503), now: now))
        XCTAssertTrue(CachePolicy.mayServeStale(sie, request: request(), after: .transport, now: now))
        XCTAssertFalse(CachePolicy.mayServeStale(sie, request: request(), after: .status(404), now: now))
        XCTAssertFalse(CachePolicy.mayServeStale(sie, request: request(), after: .status(503), now: t0.addingTimeInterval(100)))
        let plain = head([("Cache-Control", "max-age=2")])
        XCTAssertTrue(CachePolicy.mayServeStale(plain, request: request(), after: .transport, now: now), "disconnected")
        XCTAssertFalse(CachePolicy.mayServeStale(plain, request: request(), after: .status(503), now: now))
        XCTAssertTrue(
            CachePolicy.mayServeStale(plain, request: request([("Cache-Control", "stale-if-error=60")]), after: .status(503), now: now))
        for forbidding in ["must-revalidate", "no-cache", "proxy-revalidate", "s-maxage=1"] {
            let stored = head([("Cache-Control", "max-age=2, \(forbidding)")])
            XCTAssertFalse(CachePolicy.mayServeStale(stored, request: request(), after: .transport, now: now), forbidding)
        }
        XCTAssertFalse(CachePolicy.mayServeStale(plain, request: request(mode: .reloadRevalidating), after: .transport, now: now))
    }

    func testUnsafeAndCallerConditionalRequestsAreForwarded() {
        let stored = head([("Cache-Control", "max-age=100")])
        XCTAssertEqual(decide([stored], request(method: "POST"), at: 1), .forward(fallback: nil, why: "method"))
        XCTAssertEqual(decide([stored], request([("If-None-Match", "\"a\"")]), at: 1), .forward(fallback: nil, why: "bypass"))
        XCTAssertEqual(
            decide([stored], request([("Range", "bytes=0-5, 7-9")]), at: 1), .forward(fallback: nil, why: "bypass"),
            "several ranges: the origin's business (one range: CachePartialTests)")
        XCTAssertEqual(decide([stored], request(method: "HEAD"), at: 1), .serve(0), "HEAD is answered from a stored GET")
    }

    func testADownloadTakesWholeStoredAnswersAndRevalidationsAndForwardsEverythingElse() {
        let answer = CacheRangeAnswer(status: 206, contentRange: "bytes 0-1/2", bodyRange: 0..<2)
        let table: [(CacheDecision, CacheDecision)] = [
            (.serve(0), .serve(0)),
            (.serveStale(0, revalidate: false), .serveStale(0, revalidate: false)),
            (.gatewayTimeout, .gatewayTimeout),
            (.serveStale(0, revalidate: true), .forward(fallback: nil, why: "stale")),
            (
                .validate(0, conditions: [.init(name: "If-None-Match", value: "\"a\"")]),
                .validate(0, conditions: [.init(name: "If-None-Match", value: "\"a\"")])
            ),
            (.forward(fallback: 0, why: "stale"), .forward(fallback: nil, why: "stale")),
            (.serveRange(0, answer, stale: false), .forward(fallback: nil, why: "partial")),
        ]
        for (decided, taken) in table {
            XCTAssertEqual(CacheBinding.downloadDecision(decided), taken, "\(decided)")
        }
    }

    // MARK: - Vary

    func testVaryMatchesOnNormalisedValuesAndKeepsSeveralVariants() {
        let english = request([("Accept-Language", "en, fr")])
        let german = request([("Accept-Language", "de")])
        let en = head([("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], for: english)
        let de = head([("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], for: german)
        XCTAssertEqual(decide([en, de], german, at: 1), .serve(1))
        XCTAssertEqual(decide([en, de], request([("Accept-Language", "FR,EN")]), at: 1), .serve(0), "order, case, blanks")
        XCTAssertEqual(decide([en, de], request([("Accept-Language", "it")]), at: 1), .forward(fallback: nil, why: "vary-miss"))
        XCTAssertEqual(decide([en], request(), at: 1), .forward(fallback: nil, why: "vary-miss"), "the request omits the field")
    }

    func testVaryOnSeveralFieldsAndFieldsNotListedDoNotMatter() {
        let original = request([("Foo", "1"), ("Bar", "2"), ("Other", "x")])
        let stored = head([("Cache-Control", "max-age=100"), ("Vary", "Foo, Bar"), ("Vary", "Baz")], for: original)
        XCTAssertEqual(decide([stored], request([("Bar", "2"), ("Foo", "1"), ("Other", "y")]), at: 1), .serve(0))
        XCTAssertEqual(decide([stored], request([("Foo", "1"), ("Bar", "3")]), at: 1), .forward(fallback: nil, why: "vary-miss"))
        XCTAssertEqual(
            decide([stored], request([("Foo", "1"), ("Bar", "2"), ("Baz", "")]), at: 1), .forward(fallback: nil, why: "vary-miss"))
        let combined = head([("Cache-Control", "max-age=100"), ("Vary", "Foo")], for: request([("Foo", "a"), ("Foo", "b")]))
        XCTAssertEqual(decide([combined], request([("Foo", "a,   b")]), at: 1), .serve(0), "lines combined, blanks removed")
    }

    func testSecretVaryFieldsAreStoredOnlyAsHashes() {
        let withToken = request([("Authorization", "Bearer secret-token"), ("Cookie", "session=abc")])
        let stored = head([("Cache-Control", "max-age=100"), ("Vary", "Authorization, Cookie")], for: withToken)
        let kept = stored.vary.compactMap(\.value).joined()
        XCTAssertFalse(kept.contains("secret-token"))
        XCTAssertFalse(kept.contains("abc"))
        XCTAssertTrue(kept.hasPrefix("sha256:"))
        XCTAssertEqual(decide([stored], withToken, at: 1), .serve(0))
        XCTAssertEqual(
            decide([stored], request([("Authorization", "Bearer other"), ("Cookie", "session=abc")]), at: 1),
            .forward(fallback: nil, why: "vary-miss"))
        let nominated = CachePolicy.varyValues(names: ["x-api-key"], request: request([("X-Api-Key", "k")]), secrets: ["x-api-key"])
        XCTAssertEqual(nominated.first?.value?.hasPrefix("sha256:"), true)
    }

    // MARK: - Validation

    func testConditionalHeadersFromValidators() {
        XCTAssertEqual(
            CachePolicy.conditionalHeaders(for: head([("ETag", "W/\"w\""), ("Last-Modified", date(-10))])),
            [.init(name: "If-None-Match", value: "W/\"w\""), .init(name: "If-Modified-Since", value: date(-10))])
        XCTAssertEqual(CachePolicy.conditionalHeaders(for: head([("ETag", "bare")])), [.init(name: "If-None-Match", value: "\"bare\"")])
        XCTAssertEqual(CachePolicy.conditionalHeaders(for: head([("Last-Modified", "garbage")])), [])
    }

    func test304RefreshesHeadersButNotBodyFields() {
        let stored = head([
            ("Cache-Control", "max-age=1"), ("ETag", "\"v1\""), ("Content-Length", "10"), ("Test-Header", "A"), ("Kept", "k"),
            ("Content-Type", "text/plain"),
        ])
        let answer = CacheResponseHead(
            status: 304,
            headers: CacheHeaders([
                ("Cache-Control", "max-age=100"), ("ETag", "\"v1\""), ("Content-Length", "0"), ("Test-Header", "B"),
                ("Connection", "close"), ("Content-Type", "text/html"),
            ]))
        let fresh = CachePolicy.freshened(
            stored, with: answer, requestTime: t0.addingTimeInterval(50), responseTime: t0.addingTimeInterval(51))
        XCTAssertEqual(fresh?.headers["Test-Header"], "B")
        XCTAssertEqual(fresh?.headers["Kept"], "k", "fields the 304 omits are kept")
        XCTAssertEqual(fresh?.headers["Content-Length"], "10", "Content-Length is never replaced")
        XCTAssertEqual(fresh?.headers["Content-Type"], "text/html")
        XCTAssertNil(fresh?.headers["Connection"])
        XCTAssertEqual(fresh.map { CachePolicy.freshnessLifetime($0) }, 100)
        XCTAssertEqual(fresh?.responseTime, t0.addingTimeInterval(51))
    }

    func test304WithADifferentValidatorDoesNotUpdate() {
        let stored = head([("ETag", "\"v1\""), ("Last-Modified", date(-100))])
        func answer(_ headers: [(String, String)]) -> CacheResponseHead { CacheResponseHead(status: 304, headers: CacheHeaders(headers)) }
        XCTAssertNil(CachePolicy.freshened(stored, with: answer([("ETag", "\"v2\"")]), requestTime: t0, responseTime: t0))
        XCTAssertNotNil(
            CachePolicy.freshened(stored, with: answer([("ETag", "W/\"v1\"")]), requestTime: t0, responseTime: t0), "weak comparison")
        XCTAssertNil(CachePolicy.freshened(stored, with: answer([("Last-Modified", date(-50))]), requestTime: t0, responseTime: t0))
        XCTAssertNotNil(CachePolicy.freshened(stored, with: answer([]), requestTime: t0, responseTime: t0))
        XCTAssertNil(CachePolicy.freshened(head([]), with: answer([("ETag", "\"x\"")]), requestTime: t0, responseTime: t0))
    }

    func testAHeadAnswerUpdatesOrDropsTheStoredGet() {
        let stored = head([("Cache-Control", "max-age=1"), ("ETag", "\"v1\""), ("Content-Length", "10"), ("X", "old")])
        let same = CacheResponseHead(
            status: 200,
            headers: CacheHeaders([("ETag", "\"v1\""), ("Content-Length", "10"), ("X", "new"), ("Cache-Control", "max-age=50")]))
        let updated = CachePolicy.headUpdated(stored, with: same, requestTime: t0, responseTime: t0)
        XCTAssertEqual(updated?.headers["X"], "new")
        XCTAssertEqual(updated.map { CachePolicy.freshnessLifetime($0) }, 50)
        let changed = CacheResponseHead(status: 200, headers: CacheHeaders([("ETag", "\"v2\""), ("Content-Length", "10")]))
        XCTAssertNil(CachePolicy.headUpdated(stored, with: changed, requestTime: t0, responseTime: t0))
        let longer = CacheResponseHead(status: 200, headers: CacheHeaders([("ETag", "\"v1\""), ("Content-Length", "11")]))
        XCTAssertNil(CachePolicy.headUpdated(stored, with: longer, requestTime: t0, responseTime: t0))
    }

    // MARK: - Invalidation and serving

    func testUnsafeMethodsInvalidateTargetAndSameOriginLocations() {
        let post = request(method: "POST")
        let headers = CacheHeaders([("Location", "/other"), ("Content-Location", "http://elsewhere.test/x")])
        XCTAssertEqual(
            CachePolicy.invalidatedKeys(request: post, status: 201, headers: headers),
            [
                "http://example.test/a?b=1", "http://example.test/other",
            ])
        XCTAssertEqual(CachePolicy.invalidatedKeys(request: post, status: 500, headers: headers), [], "a failure invalidates nothing")
        XCTAssertEqual(CachePolicy.invalidatedKeys(request: request(), status: 200, headers: headers), [], "a safe method")
        for method in ["PUT", "DELETE", "PATCH", "FOO"] {
            XCTAssertEqual(
                CachePolicy.invalidatedKeys(request: request(method: method), status: 204, headers: CacheHeaders()).count, 1, method)
        }
    }

    func testKeysKeepTheQueryAndDropTheFragment() {
        XCTAssertEqual(CachePolicy.key(for: URL(string: "http://h/p?q=1#frag")!), "http://h/p?q=1")
        XCTAssertNotEqual(CachePolicy.key(for: URL(string: "http://h/p?q=1")!), CachePolicy.key(for: URL(string: "http://h/p?q=2")!))
    }

    func testServedHeadersCarryTheCurrentAgeAndCacheStatusAndKeepDate() {
        let stored = head([("Cache-Control", "max-age=100"), ("Date", date(0)), ("Age", "5"), ("Expires", date(100))])
        let served = CachePolicy.servedHeaders(stored, now: t0.addingTimeInterval(10), status: CachePolicy.cacheStatus(hit: true, ttl: 85))
        XCTAssertEqual(served["Age"], "15")
        XCTAssertEqual(served["Date"], date(0))
        XCTAssertEqual(served["Expires"], date(100))
        XCTAssertEqual(served["Cache-Status"], "Courier; hit; ttl=85")
        XCTAssertEqual(CachePolicy.cacheStatus(hit: false, forward: "stale", forwardStatus: 304), "Courier; fwd=stale; fwd-status=304")
    }

    func testAStaleAnswerCarriesWarning110OnceAndAFreshOneNone() {
        // Given an answer fresh for 100 s, stored at 0
        let stored = head([("Cache-Control", "max-age=100"), ("Date", date(0))])
        // When it is served fresh, then stale
        let fresh = CachePolicy.servedHeaders(stored, now: t0.addingTimeInterval(50), status: "Courier; hit")
        let stale = CachePolicy.servedHeaders(stored, now: t0.addingTimeInterval(150), status: "Courier; hit")
        // Then only the stale one says so, for clients that still read RFC 7234's Warning
        XCTAssertEqual(fresh.values("Warning"), [])
        XCTAssertEqual(stale.values("Warning"), [#"110 - "Response is Stale""#])
        // And an answer stored with a 110 already gets no second one
        let warned = head([("Cache-Control", "max-age=1"), ("Date", date(0)), ("Warning", #"110 - "Response is Stale""#)])
        XCTAssertEqual(CachePolicy.servedHeaders(warned, now: t0.addingTimeInterval(5), status: "x").values("Warning").count, 1)
    }
}
