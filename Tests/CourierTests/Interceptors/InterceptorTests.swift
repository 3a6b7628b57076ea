import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class InterceptorTests: CourierTestCase {
    private let attempts = Counter()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let attempts = attempts
        configuration.interceptor = Interceptor(adapters: [
            Adapter { request, attempt, completion in
                attempts.increment()
                var request = request
                request.setValue("token-\(attempt)", forHTTPHeaderField: "X-Token")
                completion(.success(request))
            }
        ])
        return configuration
    }

    func testAnEventStreamConnectionKeepsTheAdaptersAndOnlyTheRetriersThatRetryOnlyRefusalsNestedOrNot() {
        // Given a manager-like interceptor: an adapter, a retry policy, and a nested interceptor
        // holding an authentication interceptor and a retrier of its own
        let auth = AuthenticationInterceptor(
            authenticator: TestAuthenticator { _ in TestCredential(token: "t") }, credential: TestCredential(token: "t"))
        let interceptor = Interceptor(adapters: [Adapter { $0 }], retriers: [RetryPolicy()])
            .then(Interceptor(retriers: [Retrier { _, _, _ in .retry }, Interceptor(retriers: [auth])]))
        // When an event stream's connection takes what it keeps
        let kept = interceptor.keepingOnlyRefusalRetriers
        // Then the adapter stays, and of the retriers only the authentication interceptor
        XCTAssertEqual(kept.adapters.count, 1)
        XCTAssertEqual(kept.retriers.count, 1)
        XCTAssertTrue(kept.retriers.first is AuthenticationInterceptor<TestAuthenticator>)
        XCTAssertTrue(kept.retriesOnlyRefusals)
        XCTAssertFalse(interceptor.retriesOnlyRefusals)
        XCTAssertFalse(Interceptor().retriesOnlyRefusals, "no retriers retry nothing, refusals included")
    }

    func testAdapterRunsForDataUploadAndDownloadTasks() {
        _ = data(request("/get"))
        _ = wait { finish in
            manager.uploadTask(with: request("/anything", method: "POST"), from: .data(Data("x".utf8)), completion: finish).resume()
        }
        _ = wait { finish in
            manager.downloadTask(with: request("/bytes/10"), to: .file(directory.appendingPathComponent("a.bin")), completion: finish)
                .resume()
        }
        XCTAssertEqual(server.requests.map { $0.header("X-Token") }, ["token-0", "token-0", "token-0"])
    }

    func testTheHeadersAdapterAddsEachHeaderToTheRequestSent() {
        // Given a request with a header of its own, and an adapter adding two more, one of them twice
        var request = request("/get")
        request.setValue("mine", forHTTPHeaderField: "X-Own")
        let adapter = Adapter.addingHeaders([
            (name: "X-Api-Key", value: "k1"), (name: "X-Trace", value: "a"), (name: "X-Trace", value: "b"),
        ])

        // When it is sent through the adapter
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request, completion: finish).intercept(with: Interceptor(adapters: [adapter])).resume()
        }

        // Then the server saw the request's own header and every one added, a repeated name with both values
        XCTAssertNil(response?.error)
        let sent = server.requests.first
        XCTAssertEqual(sent?.header("X-Own"), "mine")
        XCTAssertEqual(sent?.header("X-Api-Key"), "k1")
        XCTAssertEqual(sent?.header("X-Trace"), "a,b")
    }

    func testFailingAdapterFailsTheTaskAndSendsNothing() {
        struct NoToken: Error {}
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/get"), completion: finish)
                .intercept(with: Interceptor(adapters: [Adapter { _ in throw NoToken() }]))
                .resume()
        }
        XCTAssertEqual(response?.error?.code, .adaptationFailed)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testRetryPolicyRetriesA503UploadWithItsBodyAndCompletesOnce() {
        let body = TestServer.deterministicBytes(count: 300_000, seed: 3)
        let samples = Box<Progress>()
        let response: DataResponse<Data>? = wait(timeout: 30) { finish in
            var policy = RetryPolicy()
            policy.initialDelay = .milliseconds(1)
            manager.uploadTask(
                with: request("/status/503", method: "PUT"), from: .data(body), uploadProgress: { samples.append($0) },
                completion: finish
            ).intercept(with: Interceptor(retriers: [policy])).resume()
        }
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertEqual(server.requests.count, 3, "the first attempt and two retries")
        XCTAssertTrue(server.requests.allSatisfy { $0.body == body }, "every attempt carried the whole body")
        XCTAssertEqual(server.requests.map { $0.header("X-Token") }, ["token-0", "token-1", "token-2"], "adapters ran again")
        XCTAssertTrue(samples.all.allSatisfy { $0.fractionCompleted <= 1 })
    }

    func testPOSTIsNotRetriedByDefault() {
        let response: DataResponse<Data>? = wait { finish in
            manager.uploadTask(with: request("/status/503", method: "POST"), from: .data(Data("x".utf8)), completion: finish)
                .intercept(with: Interceptor(retriers: [RetryPolicy()])).resume()
        }
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testTransientNetworkErrorIsRetried() {
        var policy = RetryPolicy()
        policy.initialDelay = .milliseconds(1)
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/bytes/10000?close_after=100&no_validators=1"), completion: finish)
                .intercept(with: Interceptor(retriers: [policy])).resume()
        }
        XCTAssertEqual(response?.error?.code, .connectionLost)
        XCTAssertEqual(server.requests.count, 3)
    }

    func testRetrierCanLeadToSuccessWithOneCompletion() {
        let flaky = Interceptor(
            adapters: [
                Adapter { request, attempt, completion in
                    var request = request
                    request.url = URL(string: attempt == 0 ? "/status/500" : "/json", relativeTo: request.url)!.absoluteURL
                    completion(.success(request))
                }
            ],
            retriers: [Retrier { _, error, attempt in error.statusCode == 500 && attempt == 0 ? .retry : .doNotRetry }])
        let response = wait { finish in
            manager.dataTask(with: request("/get"), serializer: .json, completion: finish).intercept(with: flaky).resume()
        }
        XCTAssertEqual(response?.value?["slideshow"]?["title"]?.string, "Sample")
        XCTAssertEqual(server.requests.map(\.path), ["/status/500", "/json"])
    }

    func testRetryAfterIsHonoured() {
        var policy = RetryPolicy()
        policy.retryLimit = 1
        let started = Date()
        _ = wait { finish in
            manager.dataTask(with: request("/status/503?retry_after=1"), completion: finish)
                .intercept(with: Interceptor(retriers: [policy])).resume()
        }
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.95)
    }

    func testCancelWhileAnAdapterHasNotAnsweredCompletesAtOnce() {
        let hung = Interceptor(adapters: [Adapter { _, _, _ in }])  // never calls back
        let response: DataResponse<Data>? = wait(timeout: 5) { finish in
            let task = manager.dataTask(with: request("/get"), completion: finish).intercept(with: hung)
            task.resume()
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testRetriedDataTaskStartsOverInsteadOfContinuingWhatItHeld() {
        var policy = RetryPolicy()
        policy.retryLimit = 1
        policy.initialDelay = .milliseconds(1)
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/bytes/50000?seed=9&close_after=20000"), completion: finish)
                .intercept(with: Interceptor(retriers: [policy])).resume()
        }
        XCTAssertEqual(response?.error?.code, .connectionLost)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertNil(server.requests.last?.header("Range"), "a retry fetches the whole body again")
    }

    func testCancelWhileWaitingToRetryCompletesAtOnce() {
        let started = Date()
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/status/503?retry_after=30"), completion: finish)
                .intercept(with: Interceptor(retriers: [RetryPolicy()]))
            task.resume()
            waitUntil("the first answer arrives") { server.requests.count == 1 }
            Thread.sleep(forTimeInterval: 0.1)
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(server.requests.count, 1)
    }
}
