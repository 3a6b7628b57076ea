import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// The response cache over real sockets: a scripted origin answers each request as the test says,
/// and counts what reached it.
final class ResponseCacheTests: ScriptedOriginTestCase {
    private func ok(_ headers: [(String, String)], body: String = "hello", status: Int = 200) -> ScriptedServer.Reply {
        .response(status: status, headers: headers + [("Content-Length", String(body.utf8.count))], body: Data(body.utf8))
    }

    private func get(_ headers: [String: String]) -> DataResponse<Data> { get("/r", headers) }

    private func get(
        _ path: String = "/r", _ headers: [String: String] = [:], method: String = "GET",
        policy: URLRequest.CachePolicy = .useProtocolCachePolicy
    ) -> DataResponse<Data> {
        var request = URLRequest(url: origin.url(path))
        request.httpMethod = method
        request.cachePolicy = policy
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return data(request, validation: .none)
    }

    private func header(_ response: DataResponse<Data>, _ name: String) -> String? {
        response.response?.value(forHTTPHeaderField: name)
    }

    func testAFreshAnswerIsServedWithoutARoundTripWithAgeAndCacheStatus() {
        script(ok([("Cache-Control", "max-age=3600"), ("X-Version", "1")]))
        let first = get()
        XCTAssertEqual(first.cacheOutcome, .miss)
        XCTAssertNil(header(first, "Cache-Status"), "the origin's answer goes out as it came")
        let second = get()
        XCTAssertEqual(second.cacheOutcome, .hit)
        XCTAssertEqual(second.data, Data("hello".utf8))
        XCTAssertEqual(header(second, "X-Version"), "1")
        XCTAssertNotNil(header(second, "Age"))
        XCTAssertTrue(header(second, "Cache-Status")?.hasPrefix("Courier; hit; ttl=") == true, header(second, "Cache-Status") ?? "none")
        XCTAssertEqual(origin.requests.count, 1, "the hit never reached the origin")
        XCTAssertGreaterThan(cache.currentBytes, 0)
    }

    func testAStaleAnswerIsRevalidatedAndThe304Merged() {
        script(
            ok([("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("X-Version", "1")]),
            .response(
                status: 304, reason: "Not Modified", headers: [("ETag", "\"v1\""), ("X-Version", "2"), ("Cache-Control", "max-age=3600")]))
        _ = get()
        let second = get()
        XCTAssertEqual(second.cacheOutcome, .revalidated)
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.data, Data("hello".utf8), "the stored body")
        XCTAssertEqual(header(second, "X-Version"), "2", "headers refreshed by the 304")
        XCTAssertEqual(header(second, "Cache-Status"), "Courier; fwd=stale; fwd-status=304")
        XCTAssertEqual(origin.requests.last?.headers.first { $0.name.lowercased() == "if-none-match" }?.value, "\"v1\"")
        // Now fresh for an hour from the 304's lifetime.
        XCTAssertEqual(get().cacheOutcome, .hit)
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testA304NamingAnotherValidatorIsAskedAgainWithoutValidators() {
        script(
            ok([("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")], body: "old"),
            .response(status: 304, reason: "Not Modified", headers: [("ETag", "\"v2\"")]),
            ok([("Cache-Control", "max-age=3600"), ("ETag", "\"v2\"")], body: "new"))
        _ = get()
        let second = get()
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.data, Data("new".utf8), "never the old body under the new validator")
        XCTAssertEqual(origin.requests.count, 3)
        XCTAssertNil(origin.requests.last?.headers.first { $0.name.lowercased() == "if-none-match" }, "asked without validators")
        XCTAssertEqual(get().data, Data("new".utf8))
        XCTAssertEqual(origin.requests.count, 3, "the new answer replaced the entry")
    }

    func testANew200ReplacesTheEntry() {
        script(
            ok([("Cache-Control", "max-age=0"), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")], body: "old"),
            ok([("Cache-Control", "max-age=3600")], body: "new"))
        _ = get()
        let second = get()
        XCTAssertEqual(second.cacheOutcome, .miss)
        XCTAssertEqual(
            origin.requests.last?.headers.first { $0.name.lowercased() == "if-modified-since" }?.value, "Mon, 01 Jan 2024 00:00:00 GMT")
        XCTAssertEqual(get().data, Data("new".utf8))
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testStaleIfErrorServesTheStoredAnswerOnA503() {
        script(ok([("Cache-Control", "max-age=0, stale-if-error=60")]), ok([], body: "down", status: 503))
        _ = get()
        let second = get()
        XCTAssertEqual(second.cacheOutcome, .stale)
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.data, Data("hello".utf8))
        XCTAssertEqual(header(second, "Cache-Status"), "Courier; fwd=stale; fwd-status=503; detail=stale-if-error")
    }

    func testA503WithoutStaleIfErrorIsDelivered() {
        script(ok([("Cache-Control", "max-age=0")]), ok([], body: "down", status: 503))
        _ = get()
        let second = get()
        XCTAssertEqual(second.response?.statusCode, 503)
        XCTAssertEqual(second.cacheOutcome, .miss)
    }

    func testAStoredAnswerIsServedWhenTheOriginCannotBeReachedUnlessMustRevalidate() {
        script(ok([("Cache-Control", "max-age=0")]), .bytes("", ending: .reset))
        _ = get()
        let second = get()
        XCTAssertEqual(second.cacheOutcome, .stale)
        XCTAssertEqual(second.data, Data("hello".utf8))
        XCTAssertNil(second.error)

        script(ok([("Cache-Control", "max-age=0, must-revalidate")]), .bytes("", ending: .reset))
        _ = get("/strict")
        XCTAssertNotNil(get("/strict").error, "must-revalidate forbids a stale answer")
    }

    func testNoStoreIsNotStoredUnlessTheCacherSaysSo() {
        script(ok([("Cache-Control", "no-store")]))
        _ = get()
        XCTAssertEqual(get().cacheOutcome, .miss)
        XCTAssertEqual(origin.requests.count, 2)

        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: URLRequest(url: origin.url("/hooked")), completion: finish)
                .cacheResponse(
                    using: .modify { candidate in
                        XCTAssertFalse(candidate.isStorable)
                        var changed = candidate
                        changed.isStorable = true
                        changed.lifetime = .seconds(600)
                        return changed
                    }
                )
                .resume()
        }
        XCTAssertEqual(response?.cacheOutcome, .miss)
        XCTAssertEqual(get("/hooked").cacheOutcome, .hit, "stored by the hook, fresh for its lifetime")
    }

    func testDoNotCachePerTaskStoresNothing() {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ =
            wait { finish in
                manager.dataTask(with: URLRequest(url: origin.url("/r")), completion: finish).cacheResponse(using: .doNotCache).resume()
            } as DataResponse<Data>?
        XCTAssertEqual(get().cacheOutcome, .miss)
    }

    func testOnlyIfCachedWithoutAStoredAnswerIs504AndSendsNothing() {
        let response = get(["Cache-Control": "only-if-cached"])
        XCTAssertEqual(response.response?.statusCode, 504)
        let strict =
            wait { finish in
                manager.dataTask(with: URLRequest(url: origin.url("/x"), cachePolicy: .returnCacheDataDontLoad), completion: finish)
                    .resume()
            } as DataResponse<Data>?
        XCTAssertEqual(strict?.error?.code, .unacceptableStatusCode, "validation refuses the 504 as any status")
        XCTAssertEqual(origin.requests.count, 0)
    }

    func testDarwinCachePoliciesAreHonoured() {
        script(ok([("Cache-Control", "max-age=0"), ("ETag", "\"e\"")]))
        _ = get()
        XCTAssertEqual(get(policy: .returnCacheDataElseLoad).cacheOutcome, .stale, "any age")
        XCTAssertEqual(get(policy: .returnCacheDataDontLoad).cacheOutcome, .stale)
        XCTAssertEqual(origin.requests.count, 1)
        _ = get(policy: .reloadIgnoringLocalCacheData)
        XCTAssertNil(
            origin.requests.last?.headers.first { $0.name.lowercased() == "if-none-match" }, "no validator when ignoring the cache")
        _ = get(policy: .reloadRevalidatingCacheData)
        XCTAssertEqual(origin.requests.last?.headers.first { $0.name.lowercased() == "if-none-match" }?.value, "\"e\"")
    }

    func testVaryKeepsOneVariantPerRequestValue() {
        script(
            ok([("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")], body: "en"),
            ok([("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")], body: "de"))
        XCTAssertEqual(get(["Accept-Language": "en"]).data, Data("en".utf8))
        XCTAssertEqual(get(["Accept-Language": "de"]).data, Data("de".utf8))
        XCTAssertEqual(get(["Accept-Language": "en"]).cacheOutcome, .hit)
        XCTAssertEqual(get(["Accept-Language": "de"]).data, Data("de".utf8))
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testAnUnsafeMethodInvalidatesTheTargetAndItsLocation() {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ = get("/a")
        _ = get("/b")
        script(ok([("Location", "/b")], status: 201))
        _ = get("/a", method: "POST")
        script(ok([("Cache-Control", "max-age=3600")]))
        XCTAssertEqual(get("/a").cacheOutcome, .miss)
        XCTAssertEqual(get("/b").cacheOutcome, .miss)
    }

    func testHeadIsAnsweredFromAStoredGet() {
        script(ok([("Cache-Control", "max-age=3600"), ("X-Version", "1")]))
        _ = get()
        let head = get(method: "HEAD")
        XCTAssertEqual(head.cacheOutcome, .hit)
        XCTAssertEqual(head.data ?? Data(), Data())
        XCTAssertEqual(header(head, "X-Version"), "1")
        XCTAssertEqual(origin.requests.count, 1)
    }

    func testConnectionListedFieldsAreNotStoredAndSetCookieIs() {
        script(
            ok([
                ("Cache-Control", "max-age=3600"), ("Connection", "close, X-Hop"), ("X-Hop", "1"), ("X-Kept", "2"),
                ("Set-Cookie", "a=1; Path=/"),
            ]))
        _ = get()
        let hit = get()
        XCTAssertEqual(hit.cacheOutcome, .hit)
        XCTAssertNil(header(hit, "X-Hop"))
        XCTAssertEqual(header(hit, "X-Kept"), "2")
        XCTAssertEqual(header(hit, "Set-Cookie"), "a=1; Path=/")
    }

    func testDecodableAndHTTPClientCallsAreServedFromTheCache() async throws {
        script(ok([("Cache-Control", "max-age=3600"), ("Content-Type", "application/json")], body: "{\"n\":1}"))
        struct Payload: Decodable, Sendable { let n: Int }
        let client = HTTPClient(baseURL: origin.url("/"), manager: manager)
        let first: Payload = try await client.get("/json")
        let second: Payload = try await client.get("/json")
        XCTAssertEqual(first.n, 1)
        XCTAssertEqual(second.n, 1)
        XCTAssertEqual(origin.requests.count, 1)
    }

    func testRemovingOneURLOrAll() {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ = get("/a")
        _ = get("/b")
        manager.responseCache?.removeResponse(for: origin.url("/a"))
        XCTAssertEqual(get("/a").cacheOutcome, .miss)
        XCTAssertEqual(get("/b").cacheOutcome, .hit)
        manager.responseCache?.removeAll()
        XCTAssertEqual(cache.currentBytes, 0)
        XCTAssertEqual(get("/b").cacheOutcome, .miss)
    }

    func testDownloadsAndStreamsNeverUseTheCache() async throws {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ = get()
        let (stream, _) = try await manager.bytes(for: URLRequest(url: origin.url("/r")))
        var received = Data()
        for try await chunk in stream { received.append(chunk) }
        XCTAssertEqual(received, Data("hello".utf8))
        XCTAssertEqual(origin.requests.count, 2, "the stream went to the origin")
    }

    func testTheTimelineAndTheLogShowTheOutcome() {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ = get()
        let hit = get()
        XCTAssertTrue(hit.metrics?.description.contains("cache: hit") == true)
        XCTAssertEqual(hit.metrics?.attempts.count, 0, "a hit makes no attempt")
    }

    func testAHitDeliversItsFinalProgressBeforeTheCompletion() {
        script(ok([("Cache-Control", "max-age=3600")]))
        _ = get()
        let fractions = Box<Double>()
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(
                with: URLRequest(url: origin.url("/r")), downloadProgress: { fractions.append($0.fractionCompleted) },
                completion: { response in
                    XCTAssertEqual(fractions.all.last, 1.0, "the final progress came first")
                    finish(response)
                }
            ).resume()
        }
        XCTAssertEqual(response?.cacheOutcome, .hit)
        XCTAssertEqual(fractions.all, [1.0])
    }

    func testTheLoggingMonitorSaysWhereTheAnswerCameFrom() {
        script(ok([("Cache-Control", "max-age=3600")]))
        let records = Box<LoggingMonitor.Record>()
        var configuration = makeConfiguration()
        configuration.eventMonitors = [LoggingMonitor(level: .info) { records.append($0) }]
        let logged = SessionManager(configuration: configuration)
        defer { logged.invalidate() }
        for _ in 0..<2 {
            _ =
                wait { finish in logged.dataTask(with: URLRequest(url: origin.url("/logged")), completion: finish).resume() }
                as DataResponse<Data>?
        }
        waitUntil("two completed records") { records.all.filter { $0.event == "completed" }.count == 2 }
        let completed = records.all.filter { $0.event == "completed" }
        XCTAssertEqual(completed.map { $0.metadata["cache"] }, ["miss", "hit"])
        XCTAssertTrue(completed.last?.message.contains("cache hit") == true, completed.last?.message ?? "")
    }

    func testStaleWhileRevalidateAnswersAtOnceAndRefreshesInTheBackground() {
        script(
            ok([("Cache-Control", "max-age=0, stale-while-revalidate=60"), ("ETag", "\"v1\"")]),
            .response(status: 304, reason: "Not Modified", headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=3600")]))
        _ = get()
        let stale = get()
        XCTAssertEqual(stale.cacheOutcome, .stale)
        XCTAssertEqual(header(stale, "Cache-Status")?.contains("detail=stale-while-revalidate"), true)
        waitUntil("the background revalidation reached the origin") { origin.requests.count == 2 }
        waitUntil("the entry is fresh again") { get().cacheOutcome == .hit }
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testManyStaleAnswersStartOneBackgroundRevalidation() {
        script(
            ok([("Cache-Control", "max-age=0, stale-while-revalidate=60"), ("ETag", "\"v1\"")]),
            ScriptedServer.Reply([
                .pause(milliseconds: 1500),
                .send(ScriptedServer.Reply.head(status: 304, reason: "Not Modified", headers: [("ETag", "\"v1\"")])),
            ]))
        _ = get()
        // The origin holds the revalidation open: every request meanwhile is a stale answer.
        for _ in 0..<10 { XCTAssertEqual(get().cacheOutcome, .stale) }
        waitUntil("the revalidation reached the origin") { origin.requests.count == 2 }
        XCTAssertEqual(origin.requests.count, 2, "one background revalidation, not one per stale answer")
    }
}
