import Courier
import CourierTestServer
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import courier_bench
import CourierSupport

/// `courier-bench cache-proxy`, the client the HTTP caching test suite measures: its options, and
/// over real sockets that it passes requests and answers through unchanged (methods, bodies,
/// headers, statuses, redirects) and says when it could not.
final class CacheProxyTests: XCTestCase {
    private var origin: TestServer!
    private var proxy: ScriptedServer!
    /// The client in front of the proxy: nothing followed, nothing retried, any status accepted.
    private var client: SessionManager!

    override func setUpWithError() throws {
        try super.setUpWithError()
        origin = try TestServer()
        proxy = try CacheProxy(options: CacheProxyOptions(upstream: origin.baseURL)).start()
        var configuration = SessionManager.Configuration()
        configuration.redirectPolicy = .refuse
        client = SessionManager(configuration: configuration)
    }

    override func tearDown() {
        client?.invalidate(cancelingTasks: true)
        proxy?.stop()
        origin?.stop()
        super.tearDown()
    }

    private func fetch(_ request: URLRequest) throws -> (HTTPURLResponse, Data) {
        let done = expectation(description: "answered")
        let box = Locked<DataResponse<Data>?>(nil)
        client.dataTask(with: request, validation: .none) { response in
            box.withLock { $0 = response }
            done.fulfill()
        }.resume()
        wait(for: [done], timeout: 20)
        let response = try XCTUnwrap(box.withLock { $0 })
        return (try XCTUnwrap(response.response, "\(String(describing: response.error))"), response.data ?? Data())
    }

    private func request(_ path: String) -> URLRequest { URLRequest(url: proxy.url(path)) }

    // MARK: - Options

    func testOptionsNeedAnUpstreamAndReadTheCacheChoice() throws {
        let plain = try XCTUnwrap(CacheProxyOptions.parse(["--upstream", "http://127.0.0.1:8000"]))
        XCTAssertEqual(plain.cache, .none)
        XCTAssertEqual(plain.upstream.absoluteString, "http://127.0.0.1:8000")
        XCTAssertEqual(try CacheProxyOptions.parse(["--upstream", "http://h", "--cache", "memory"])?.cache, .memory)
        XCTAssertEqual(try CacheProxyOptions.parse(["--upstream=http://h", "--cache", "/tmp/c"])?.cache, .disk("/tmp/c"))
        XCTAssertEqual(try CacheProxyOptions.parse(["--upstream", "http://h", "--max-bytes", "2M"])?.maximumBytes, 2 << 20)
        XCTAssertNil(try CacheProxyOptions.parse(["--help"]))
        for arguments in [
            [], ["--upstream", "ftp://h"], ["--upstream", "http://h/?a=1"], ["--upstream", "http://h", "--timeout", "0"],
            ["--upstream", "http://h", "--cache", ""], ["--upstream", "http://h", "--bogus", "1"],
        ] {
            XCTAssertThrowsError(try CacheProxyOptions.parse(arguments), "\(arguments)")
        }
    }

    // MARK: - Passing through

    func testARequestWithABodyAndItsHeadersReachesTheOriginAsSent() throws {
        // Given a PUT with a body and headers of the suite's kind
        var put = request("/anything/config?x=1")
        put.httpMethod = "PUT"
        put.httpBody = Data(#"{"a":1}"#.utf8)
        put.setValue("application/json", forHTTPHeaderField: "Content-Type")
        put.setValue("3", forHTTPHeaderField: "Req-Num")
        put.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        // When
        let (response, _) = try fetch(put)
        // Then the origin saw the same method, target, body and headers
        XCTAssertEqual(response.statusCode, 200)
        let seen = try XCTUnwrap(origin.requests.last)
        XCTAssertEqual(seen.method, "PUT")
        XCTAssertEqual(seen.target, "/anything/config?x=1")
        XCTAssertEqual(seen.body, Data(#"{"a":1}"#.utf8))
        XCTAssertEqual(seen.header("Req-Num"), "3")
        XCTAssertEqual(seen.header("Cache-Control"), "no-cache")
        XCTAssertEqual(seen.header("Content-Type"), "application/json")
    }

    func testResponseHeadersStatusAndBodyComeBackUnchanged() throws {
        let (response, body) = try fetch(request("/response-headers?Cache-Control=max-age%3D60&ETag=%22v1%22&X-Test=a"))
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.value(forHTTPHeaderField: "Cache-Control"), "max-age=60")
        XCTAssertEqual(response.value(forHTTPHeaderField: "ETag"), "\"v1\"")
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-Test"), "a")
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Length"), String(body.count))
        XCTAssertFalse(body.isEmpty)
    }

    func testARedirectIsTheAnswerNotFollowed() throws {
        let (response, _) = try fetch(request("/redirect-to?url=/get&status_code=301"))
        XCTAssertEqual(response.statusCode, 301)
        XCTAssertEqual(response.value(forHTTPHeaderField: "Location"), "/get")
        XCTAssertEqual(origin.requests.map(\.path), ["/redirect-to"])
    }

    func testErrorStatusesAndA304PassThroughWithoutBodies() throws {
        XCTAssertEqual(try fetch(request("/status/503")).0.statusCode, 503, "not retried: the suite counts requests")
        var conditional = request("/bytes/10")
        conditional.setValue("\"bytes-10-0\"", forHTTPHeaderField: "If-None-Match")
        let (notModified, body) = try fetch(conditional)
        XCTAssertEqual(notModified.statusCode, 304)
        XCTAssertEqual(body, Data())
        XCTAssertEqual(origin.requests.filter { $0.path == "/status/503" }.count, 1)
    }

    func testAnOriginThatIsGoneIsA502SayingWhy() throws {
        origin.stop()
        let (response, _) = try fetch(request("/get"))
        XCTAssertEqual(response.statusCode, 502)
        XCTAssertNotNil(response.value(forHTTPHeaderField: "Courier-Error"))
    }

    func testWithTheMemoryCacheAFreshAnswerIsServedWithoutAskingTheOrigin() throws {
        // Given a proxy whose manager has a memory cache
        var options = CacheProxyOptions(upstream: origin.baseURL)
        options.cache = .memory
        let cached = try CacheProxy(options: options).start()
        defer { cached.stop() }
        let url = cached.url("/response-headers?Cache-Control=max-age%3D600&X-Test=1")
        // When the same fresh answer is asked for twice
        let (first, body) = try fetch(URLRequest(url: url))
        let (second, again) = try fetch(URLRequest(url: url))
        // Then the origin saw one request, and the second answer says where it came from
        XCTAssertEqual(first.statusCode, 200)
        XCTAssertEqual(second.statusCode, 200)
        XCTAssertEqual(again, body)
        XCTAssertEqual(origin.requests.filter { $0.path == "/response-headers" }.count, 1)
        XCTAssertEqual(second.value(forHTTPHeaderField: "X-Test"), "1")
        XCTAssertNotNil(second.value(forHTTPHeaderField: "Cache-Status"))
    }

    func testAnUnusableDiskCacheDirectoryIsAUsageError() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cache-proxy-\(UUID().uuidString)")
        try Data("not a directory".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var options = CacheProxyOptions(upstream: origin.baseURL)
        options.cache = .disk(file.path)
        XCTAssertThrowsError(try CacheProxy.configuration(options)) { error in
            XCTAssertTrue((error as? BenchUsageError)?.message.hasPrefix("--cache \(file.path): ") == true, "\(error)")
        }
    }

    // MARK: - Pure parts

    func testHopByHopHeadersAndTheOnesConnectionNamesAreNotForwarded() throws {
        let received = RecordedRequest(
            method: "GET", target: "/test/1",
            headers: [
                ("Host", "proxy"), ("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "5"),
                ("Accept-Encoding", "gzip"), ("Test-ID", "t"), ("If-None-Match", "\"a\""),
            ],
            body: Data(), connectionID: 1)
        let options = CacheProxyOptions(upstream: URL(string: "http://127.0.0.1:9/")!)
        let request = try XCTUnwrap(CacheProxy.upstreamRequest(for: received, options: options))
        XCTAssertEqual(request.url?.absoluteString, "http://127.0.0.1:9/test/1")
        XCTAssertEqual(Set((request.allHTTPHeaderFields ?? [:]).keys.map { $0.lowercased() }), ["test-id", "if-none-match"])
        let absolute = RecordedRequest(method: "GET", target: "http://elsewhere/x", headers: [], body: Data(), connectionID: 1)
        XCTAssertNil(CacheProxy.upstreamRequest(for: absolute, options: options), "only paths: never a request elsewhere")
    }
}
