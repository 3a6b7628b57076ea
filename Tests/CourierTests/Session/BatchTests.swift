import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class BatchTests: CourierTestCase {
    func testBatchReportsProgressAfterEachTaskAndCompletesOnceInRequestOrder() {
        let requests = (0..<12).map { request("/bytes/\(100 + $0)?seed=\($0)") }
        let progress = Box<String>()
        let results: [DataResponse<Data>]? = wait { finish in
            manager.batch(requests, serializer: .data, progress: { progress.append("\($0)/\($1)") }, completion: finish)
        }
        XCTAssertEqual(progress.all, (1...12).map { "\($0)/12" }, "after each task, in order")
        XCTAssertEqual(results?.map { $0.value?.count }, (0..<12).map { 100 + $0 }, "results in request order")
        XCTAssertEqual(results?.map(\.value), (0..<12).map { TestServer.deterministicBytes(count: 100 + $0, seed: UInt64($0)) })
    }

    func testFailuresAreResultsNotAbortions() {
        let results: [DataResponse<Data>]? = wait { finish in
            manager.batch([request("/get"), request("/status/500"), request("/get")], serializer: .data, completion: finish)
        }
        XCTAssertEqual(results?.map { $0.error?.statusCode }, [nil, 500, nil])
    }

    func testCancellingTheBatchCancelsItsTasksAndStillCompletesOnce() {
        let results: [DataResponse<Data>]? = wait { finish in
            let batch = manager.batch(
                [request("/never-answer"), request("/never-answer"), request("/get")], serializer: .data, completion: finish)
            waitUntil("the slow requests arrive") { server.requests.filter { $0.path == "/never-answer" }.count == 2 }
            batch.cancel()
        }
        XCTAssertEqual(results?.count, 3)
        XCTAssertEqual(results?.prefix(2).map { $0.error?.code }, [.cancelled, .cancelled])
    }

    func testEmptyBatchCompletesAtOnce() {
        let results: [DataResponse<Data>]? = wait { finish in manager.batch([], serializer: .data, completion: finish) }
        XCTAssertEqual(results?.count, 0)
    }

    func testAsyncBatchAndItsCancellation() async {
        let manager = manager!
        let all = await manager.batch([request("/json"), request("/json")], serializer: .json)
        XCTAssertEqual(all.compactMap { $0.value?["slideshow"]?["title"]?.string }, ["Sample", "Sample"])

        let slow = [request("/never-answer"), request("/never-answer")]
        let work = Task { await manager.batch(slow, serializer: .data) }
        while server.requests.filter({ $0.path == "/never-answer" }).count < 2 { try? await Task.sleep(for: .milliseconds(5)) }
        work.cancel()
        let cancelled = await work.value
        XCTAssertEqual(cancelled.map { $0.error?.code }, [.cancelled, .cancelled])
    }
}

final class ConfigurationCodingTests: CourierTestCase {
    func testConfigurationLoadsFromJSONAndAppliesToTheManager() throws {
        let json = """
            {"requestTimeout": 7, "maximumConnectionsPerHost": 3, "maximumResponseSize": 1000,
             "defaultHeaders": {"X-Service": "billing"}, "sensitiveHeaders": ["X-Api-Key"], "maximumRedirects": 2,
             "retryPolicy": {"retryLimit": 1, "retryableStatusCodes": [503], "initialDelayMilliseconds": 1},
             "temporaryDirectory": "/var/tmp/billing", "maximumRunningTasksPerHost": 2}
            """
        let configuration = try JSONDecoder().decode(SessionManager.Configuration.self, from: Data(json.utf8))
        XCTAssertEqual(configuration.urlSessionConfiguration.timeoutIntervalForRequest, 7)
        XCTAssertEqual(configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost, 3)
        XCTAssertEqual(configuration.maximumResponseSize, 1000)
        XCTAssertEqual(configuration.redirectPolicy.maximumHops, 2)
        XCTAssertEqual(configuration.retryPolicy?.retryLimit, 1)
        XCTAssertEqual(configuration.retryPolicy?.initialDelay, .milliseconds(1))
        XCTAssertEqual(configuration.retryPolicy?.retryableMethods, RetryPolicy().retryableMethods, "missing keys keep defaults")
        XCTAssertEqual(configuration.temporaryDirectory?.path, "/var/tmp/billing")
        XCTAssertEqual(configuration.maximumRunningTasksPerHost, 2)
        XCTAssertNotNil(configuration.defaultHeaders["User-Agent"], "added to the standard headers, not replacing them")
        let loaded = SessionManager(configuration: configuration)
        _ = wait { finish in loaded.dataTask(with: request("/status/503"), completion: finish).resume() }
        XCTAssertEqual(server.requests.count, 2, "the decoded retry policy applies")
        XCTAssertEqual(server.requests.first?.header("X-Service"), "billing")
        XCTAssertEqual(
            wait { finish in loaded.dataTask(with: request("/bytes/2000"), completion: finish).resume() }?.error?.code,
            .responseTooLarge)
    }

    func testConfigurationRoundTripsAndRejectsNonsense() throws {
        var original = SessionManager.Configuration()
        original.maximumResponseSize = 12345
        original.defaultHeaders["X-A"] = "1"
        original.retryPolicy = RetryPolicy()
        original.enableCookies()
        original.deadline = .milliseconds(1500)
        original.waitsForConnectivity = .seconds(30)
        let decoded = try JSONDecoder().decode(SessionManager.Configuration.self, from: JSONEncoder().encode(original))
        XCTAssertEqual(decoded.deadline, .milliseconds(1500))
        XCTAssertEqual(decoded.waitsForConnectivity, .seconds(30))
        XCTAssertNil(try JSONDecoder().decode(SessionManager.Configuration.self, from: Data("{}".utf8)).waitsForConnectivity)
        XCTAssertNil(try JSONDecoder().decode(SessionManager.Configuration.self, from: Data("{}".utf8)).deadline)
        XCTAssertEqual(decoded.maximumResponseSize, 12345)
        XCTAssertEqual(decoded.defaultHeaders, original.defaultHeaders)
        XCTAssertEqual(decoded.retryPolicy, original.retryPolicy)
        XCTAssertEqual(decoded.urlSessionConfiguration.httpCookieAcceptPolicy, .always)
        XCTAssertThrowsError(try JSONDecoder().decode(SessionManager.Configuration.self, from: Data(#"{"requestTimeout": -1}"#.utf8)))
        for nonsense in [
            #"{"maximumResponseSize": 0}"#, #"{"progressIntervalMilliseconds": -5}"#, #"{"maximumRedirects": -1}"#,
            #"{"maximumRunningTasksPerHost": 0}"#, #"{"temporaryDirectory": "relative"}"#, #"{"deadline": 0}"#,
            #"{"waitsForConnectivity": 0}"#, #"{"waitsForConnectivity": -3}"#, #"{"retryPolicy": {"initialDelayMilliseconds": -1}}"#,
            #"{"retryPolicy": {"retryLimit": -1}}"#,
        ] {
            XCTAssertThrowsError(try JSONDecoder().decode(SessionManager.Configuration.self, from: Data(nonsense.utf8)), nonsense)
        }
        let encoded = String(decoding: try JSONEncoder().encode(RetryPolicy()), as: UTF8.self)
        XCTAssertTrue(encoded.contains(#""initialDelayMilliseconds":250"#), encoded)
    }

    func testManagerCopiedFromAnothersConfiguration() {
        var configuration = makeConfiguration()
        configuration.defaultHeaders["X-Copied"] = "yes"
        let original = SessionManager(configuration: configuration)
        let copy = SessionManager(copying: original)
        XCTAssertFalse(copy.session === original.session, "its own URLSession")
        _ = wait { finish in copy.dataTask(with: request("/get"), completion: finish).resume() }
        XCTAssertEqual(server.requests.last?.header("X-Copied"), "yes")
    }

    func testDefaultHeadersNameCourierAndLanguagesButNeverOverrideTheRequest() {
        _ = data(request("/get"))
        let userAgent = server.requests.last?.header("User-Agent") ?? ""
        XCTAssertTrue(userAgent.hasPrefix("Courier/\(CourierInfo.version) ("), userAgent)
        XCTAssertNotNil(server.requests.last?.header("Accept-Language"))
        var custom = request("/get")
        custom.setValue("mine/1", forHTTPHeaderField: "User-Agent")
        _ = data(custom)
        XCTAssertEqual(server.requests.last?.header("User-Agent"), "mine/1")
    }

    func testARequestHeaderInAnyCaseReplacesTheDefaultAndKeepsTheOthers() {
        var custom = request("/get")
        custom.allHTTPHeaderFields = ["user-agent": "lower/2", "X-Trace": "abc"]
        XCTAssertNil(data(custom).error)
        let sent = server.requests.last
        XCTAssertEqual(
            sent?.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value), ["lower/2"],
            "one User-Agent, the request's")
        XCTAssertEqual(sent?.header("X-Trace"), "abc")
        XCTAssertNotNil(sent?.header("Accept-Language"), "the other default still goes out")
    }

    func testADefaultHeaderWithALineBreakIsRefusedNotDropped() {
        var configuration = makeConfiguration()
        configuration.defaultHeaders["X-Injected"] = "a\r\nX-Evil: 1"
        let manager = SessionManager(configuration: configuration)
        let before = server.requests.count
        let response = wait { finish in manager.dataTask(with: request("/get"), completion: finish).resume() }
        XCTAssertEqual(response?.error?.code, .invalidRequest)
        XCTAssertEqual(server.requests.count, before, "nothing was sent")
    }
}
