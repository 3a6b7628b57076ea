import CourierTestServer
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The header diet (Docs/Platform.md §6.18): FoundationNetworking gets only the lines of a 2xx head
/// it acts on, and every response a user sees is still built from the whole head — the same fields
/// and values as FoundationNetworking's own `HTTPURLResponse` without the diet.
final class HeadDietTests: CourierTestCase {
    // MARK: - The carried head, read as FoundationNetworking reads a head (pure)

    func testDuplicateFieldsMergeWithACommaInTheirOrder() {
        let fields = HeadDiet.fields(carried: "K\nVia: a\nX-A: 1\nVia: b", key: "K")
        XCTAssertEqual(fields, ["Via": "a, b", "X-A": "1"])
    }

    func testNamesThatDifferOnlyInCaseStaySeparateUntilTheResponseCapitalizesThem() {
        XCTAssertEqual(HeadDiet.fields(carried: "K\nfoo: x\nFOO: y", key: "K"), ["foo": "x", "FOO": "y"])
    }

    func testEmptyValuesAndTrailingBlanksAreKeptAsFoundationNetworkingKeepsThem() {
        let fields = HeadDiet.fields(carried: "K\nA:\nB: \nC: v  ", key: "K")
        XCTAssertEqual(fields, ["A": "", "B": "", "C": "v  "])
    }

    func testFoldedLinesJoinWithOneSpace() {
        XCTAssertEqual(HeadDiet.fields(carried: "K\nA: a\n  b\n\tc\nB:\n d", key: "K"), ["A": "a b c", "B": "d"])
    }

    func testLinesFoundationNetworkingRefusesRefuseTheHead() {
        for bad in ["K\nA:b", "K\nA:  ", "K\nNo colon", "K\n leading", "K\nA: x\n   ", "K\n: x"] {
            XCTAssertNil(HeadDiet.fields(carried: bad, key: "K"), bad)
        }
    }

    func testAValueWithoutTheKeyIsNotACarriedHead() {
        XCTAssertNil(HeadDiet.fields(carried: "spoof\nA: 1", key: "K"))
        // A server's own field of that name before the kit's (FoundationNetworking merged them).
        XCTAssertEqual(HeadDiet.fields(carried: "spoof, K\nA: 1", key: "K"), ["A": "1"])
        XCTAssertEqual(HeadDiet.fields(carried: "K", key: "K"), [:])
    }

    // MARK: - Over real sockets: the same response with and without the diet

    func testTheCorpusGivesTheSameResponseWithAndWithoutTheDiet() throws {
        let long = String(repeating: "v", count: 8_000)
        let corpus = [
            "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Mon, 07 Dec 2026 22:00:00 GMT\r\nContent-Type: text/plain\r\n"
                + "Content-Length: 2\r\nLast-Modified: Mon, 07 Dec 2026 21:00:00 GMT\r\nConnection: close\r\n"
                + "ETag: \"abc\"\r\nAccept-Ranges: bytes\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nVia: a\r\nX-A: 1\r\nVia: b\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Space: \r\nTrailing: v  \r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX-Fold: a\r\n  b\r\n\tc\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX-Long: \(long)\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX-Utf: café\r\ncontent-type: text/html; charset=utf-8\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX-Courier-Head: spoof\r\nx-courier-head: again\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 200 OK\r\nX-Final: 1\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/10\r\nETag: \"e\"\r\nContent-Length: 2\r\n\r\nab",
            "HTTP/1.1 204 No Content\r\nX-Seen: yes\r\n\r\n",
            "HTTP/1.1 404 Not Found\r\nX-Why: gone\r\nContent-Length: 0\r\n\r\n",
        ]
        for raw in corpus {
            let (withDiet, withheld) = try fetch(raw, diet: true)
            let (without, withheldOff) = try fetch(raw, diet: false)
            let name = String(raw.prefix(60))
            XCTAssertEqual(withDiet.statusCode, without.statusCode, name)
            XCTAssertEqual(headers(withDiet), headers(without), name)
            XCTAssertEqual(withDiet.expectedContentLength, without.expectedContentLength, name)
            XCTAssertEqual(withDiet.mimeType, without.mimeType, name)
            XCTAssertEqual(withDiet.textEncodingName, without.textEncodingName, name)
            XCTAssertEqual(withheldOff, 0, name)
            if raw.contains("200 OK\r\nServer") {
                // Server, Date, Content-Type, Content-Length, Last-Modified, Connection, ETag,
                // Accept-Ranges: FoundationNetworking's own response is replaced, so it needs none.
                XCTAssertEqual(withheld, 8, name)
            }
        }
    }

    func testCaseVariantsOfOneNameGiveOneOfTheirValuesAsWithoutTheDiet() throws {
        let raw = "HTTP/1.1 200 OK\r\nfoo-bar: x\r\nFOO-BAR: y\r\nContent-Length: 0\r\n\r\n"
        let (withDiet, _) = try fetch(raw, diet: true)
        let (without, _) = try fetch(raw, diet: false)
        // FoundationNetworking keeps one of them (its dictionary's order decides which).
        XCTAssertTrue(["x", "y"].contains(withDiet.value(forHTTPHeaderField: "Foo-Bar")))
        XCTAssertTrue(["x", "y"].contains(without.value(forHTTPHeaderField: "Foo-Bar")))
        XCTAssertEqual(Set(headers(withDiet).keys), Set(headers(without).keys))
    }

    func testTheServersOwnCourierHeadFieldReachesTheResponseAsSent() throws {
        let (response, _) = try fetch("HTTP/1.1 200 OK\r\nX-Courier-Head: spoof\r\nX-B: 1\r\nContent-Length: 0\r\n\r\n", diet: true)
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-Courier-Head"), "spoof")
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-B"), "1")
    }

    func testARedirectChainEndsWithTheWholeFinalHead() throws {
        let server = try ScriptedServer { _, index in
            index == 0
                ? .bytes("HTTP/1.1 302 Found\r\nLocation: /b\r\nX-Hop: 1\r\nContent-Length: 0\r\n\r\n")
                : .bytes("HTTP/1.1 200 OK\r\nX-Final: yes\r\nETag: \"z\"\r\nContent-Length: 2\r\n\r\nok")
        }
        defer { server.stop() }
        let response = wait { finish in
            self.manager.dataTask(with: URLRequest(url: server.url("/a")), completion: finish).resume()
        }
        XCTAssertEqual(response?.value, Data("ok".utf8))
        XCTAssertEqual(response?.response?.url?.path, "/b")
        XCTAssertEqual(response?.response?.value(forHTTPHeaderField: "X-Final"), "yes")
        XCTAssertEqual(response?.response?.value(forHTTPHeaderField: "ETag"), "\"z\"")
    }

    func testCookiesAreStoredFromADietHead() throws {
        let storage = HTTPCookieStorage.shared
        let server = try ScriptedServer { _, _ in
            .bytes("HTTP/1.1 200 OK\r\nX-Other: 1\r\nSet-Cookie: diet=on; Path=/\r\nContent-Length: 0\r\n\r\n")
        }
        defer { server.stop() }
        let configuration = makeConfiguration()
        configuration.urlSessionConfiguration.httpCookieStorage = storage
        configuration.urlSessionConfiguration.httpCookieAcceptPolicy = .always
        configuration.urlSessionConfiguration.httpShouldSetCookies = true
        let cookies = SessionManager(configuration: configuration)
        let response = wait { finish in
            cookies.dataTask(with: URLRequest(url: server.url("/c")), completion: finish).resume()
        }
        XCTAssertEqual(response?.response?.value(forHTTPHeaderField: "X-Other"), "1")
        XCTAssertEqual(response?.response?.value(forHTTPHeaderField: "Set-Cookie"), "diet=on; Path=/")
        XCTAssertTrue(storage.cookies(for: server.url("/c"))?.contains { $0.name == "diet" && $0.value == "on" } ?? false)
    }

    func testAHeadRequestAndA304GetTheirWholeHeads() throws {
        let server = try ScriptedServer { request, _ in
            request.method == "HEAD"
                ? .bytes("HTTP/1.1 200 OK\r\nX-Head: 1\r\nETag: \"h\"\r\nContent-Length: 5\r\n\r\n")
                : .bytes("HTTP/1.1 304 Not Modified\r\nETag: \"h\"\r\nX-Not: 1\r\n\r\n")
        }
        defer { server.stop() }
        var head = URLRequest(url: server.url("/h"))
        head.httpMethod = "HEAD"
        let headResponse = wait { finish in self.manager.dataTask(with: head, completion: finish).resume() }
        XCTAssertEqual(headResponse?.response?.value(forHTTPHeaderField: "X-Head"), "1")
        XCTAssertEqual(headResponse?.response?.expectedContentLength, 5)
        let notModified = wait { finish in
            self.manager.dataTask(with: URLRequest(url: server.url("/n")), completion: finish).resume()
        }
        XCTAssertEqual(notModified?.response?.statusCode, 304)
        XCTAssertEqual(notModified?.response?.value(forHTTPHeaderField: "X-Not"), "1")
    }

    func testAPlainURLSessionInTheSameProcessGetsEveryLine() throws {
        let server = try ScriptedServer { _, _ in
            .bytes("HTTP/1.1 200 OK\r\nX-Plain: 1\r\nETag: \"p\"\r\nContent-Length: 0\r\n\r\n")
        }
        defer { server.stop() }
        let before = withheldCount()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let response = wait { (finish: @escaping @Sendable (HTTPURLResponse?) -> Void) in
            session.dataTask(with: server.url("/p")) { _, response, _ in finish(response as? HTTPURLResponse) }.resume()
        }
        XCTAssertEqual(response??.value(forHTTPHeaderField: "X-Plain"), "1")
        XCTAssertNil(response??.value(forHTTPHeaderField: HeadDiet.field))
        XCTAssertEqual(withheldCount(), before)
    }

    func testATaskMadeOnTheManagersSessionDirectlyGetsEveryLine() throws {
        // Given a manager with the diet on, and a server answering with lines FoundationNetworking
        // does not act on
        let server = try ScriptedServer { _, _ in
            .bytes("HTTP/1.1 200 OK\r\nX-Direct: 1\r\nETag: \"d\"\r\nContent-Length: 0\r\n\r\n")
        }
        defer { server.stop() }
        let before = withheldCount()

        // When a task is made on its URLSession directly (no Courier mark on the request)
        let response = wait { (finish: @escaping @Sendable (HTTPURLResponse?) -> Void) in
            self.manager.session.dataTask(with: server.url("/direct")) { _, response, _ in
                finish(response as? HTTPURLResponse)
            }.resume()
        }

        // Then its completion handler sees FoundationNetworking's whole head, nothing withheld
        XCTAssertEqual(response??.value(forHTTPHeaderField: "X-Direct"), "1")
        XCTAssertEqual(response??.value(forHTTPHeaderField: "ETag"), "\"d\"")
        XCTAssertNil(response??.value(forHTTPHeaderField: HeadDiet.field))
        XCTAssertEqual(withheldCount(), before)
    }

    func testTheMarkAskingForTheDietNeverReachesTheServer() throws {
        // Given the test server, which records every header it receives
        let server = try TestServer()
        defer { server.stop() }

        // When the manager (diet on) sends a request
        let response = wait { finish in
            self.manager.dataTask(with: URLRequest(url: server.url("/get")), completion: finish).resume()
        }

        // Then the request went out without the mark, and its head was on the diet
        XCTAssertNil(response?.error)
        let names = server.requests.first?.headers.map { $0.name.lowercased() } ?? ["no request"]
        XCTAssertFalse(names.contains(HeadDiet.requestField.lowercased()), "\(names)")
        XCTAssertFalse(names.isEmpty)
    }

    func testASessionWithAURLCacheMarksNoRequestAndOneWithoutItDoes() throws {
        // FoundationNetworking would store the head it was given in its URLCache: such a session's
        // requests are never marked (SessionCore). A manager always sets `urlCache = nil`, so the
        // guard is tested on the session core itself, with requests as it hands them over.
        let server = try ScriptedServer { _, _ in
            .bytes("HTTP/1.1 200 OK\r\nX-Cached: 1\r\nETag: \"c\"\r\nCache-Control: max-age=60\r\nContent-Length: 0\r\n\r\n")
        }
        defer { server.stop() }
        for withCache in [true, false] {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = withCache ? URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil) : nil
            let queue = DispatchQueue(label: "head-diet-tests.calls")
            let router = SessionDelegate(table: TaskDelegateTable(), callQueue: queue, didInvalidate: { _ in })
            let core = SessionCore(
                configuration: configuration, router: router, label: "head-diet-tests", callbackQueue: nil, callQueue: queue,
                headerDiet: true)
            defer { core.session.invalidateAndCancel() }
            XCTAssertEqual(core.tls.headerDiet, !withCache)
            let request = core.tls.handedOver(try core.tls.stamped(URLRequest(url: server.url("/cached"))))
            let before = withheldCount()
            let response = wait { (finish: @escaping @Sendable (HTTPURLResponse?) -> Void) in
                core.session.dataTask(with: request) { _, response, _ in finish(response as? HTTPURLResponse) }.resume()
            }
            let withheld = withheldCount() - before
            if withCache {
                XCTAssertEqual(withheld, 0)
                XCTAssertEqual(response??.value(forHTTPHeaderField: "X-Cached"), "1")
                XCTAssertNil(response??.value(forHTTPHeaderField: HeadDiet.field))
            } else {
                // A marked request: its completion handler sees FoundationNetworking's own, cut-down
                // response (only Courier's delegate rebuilds it).
                XCTAssertEqual(withheld, 4, "X-Cached, ETag, Cache-Control, Content-Length")
            }
        }
    }

    func testTheDoctorReportCountsWithheldLines() throws {
        _ = try fetch("HTTP/1.1 200 OK\r\nX-One: 1\r\nX-Two: 2\r\nContent-Length: 0\r\n\r\n", diet: true)
        XCTAssertGreaterThanOrEqual(PlatformFixes.status.headerLinesWithheld ?? 0, 2)
    }

    // MARK: - Helpers

    /// The response for the raw answer `raw` from a manager with the diet on or off, and how many
    /// lines the kit withheld meanwhile.
    private func fetch(_ raw: String, diet: Bool) throws -> (HTTPURLResponse, UInt64) {
        let server = try ScriptedServer { _, _ in .bytes(raw) }
        defer { server.stop() }
        var configuration = makeConfiguration()
        configuration.headerDiet = diet
        let session = SessionManager(configuration: configuration)
        let before = withheldCount()
        let response = wait { finish in
            session.dataTask(with: URLRequest(url: server.url("/x")), completion: finish).resume()
        }
        let withheld = withheldCount() - before
        // An empty 200 or a 404 ends in a typed error; the response it carries is what is compared.
        if let error = response?.error { XCTAssertNotNil(error.response ?? response?.response, error.description) }
        return (try XCTUnwrap(response?.response), withheld)
    }

    private func headers(_ response: HTTPURLResponse) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { result[name] = value }
        }
        return result
    }

    private func withheldCount() -> UInt64 { PlatformFixes.status.headerLinesWithheld ?? 0 }
}
