import Courier
import CourierSupport
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's `WebSocketTask` as an Autobahn|Testsuite client (`courier-bench autobahn`): the suite's
/// client protocol over the public API, as a user would write an echo client. The verdicts are the
/// fuzzing server's (its report); this only runs the cases.
struct AutobahnClient: Sendable {
    let options: AutobahnOptions

    /// Runs the whole protocol and returns the exit status; blocks the calling thread.
    func runBlocking() -> Int32 {
        let status = Locked<Int32>(Bench.workloadFailure)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result = await run()
            status.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return status.withLock { $0 }
    }

    /// `getCaseCount`, each case chosen, `updateReports`; the exit status.
    func run() async -> Int32 {
        var configuration = SessionManager.Configuration()
        if let caFile = options.caFile {
            configuration.tls = TLSPolicies(default: TLSPolicy(trust: .only([.file(caFile)])))
        }
        configuration.webSocket.compression = options.deflate ? WebSocketCompression() : nil
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }

        let count: Int
        do {
            count = try await caseCount(manager)
        } catch {
            Bench.writeToStandardError("courier-bench: autobahn: getCaseCount: \(error)\n")
            return Bench.workloadFailure
        }
        let start = ContinuousClock.now
        var ran = 0
        var ended = 0
        for number in 1...max(count, 1) where number <= count && options.includes(number) {
            ran += 1
            if let error = await runCase(number, manager) {
                // Expected for the hostile cases (the client closes with 1002 or 1007 and fails):
                // the report says whether that was right.
                ended += 1
                Bench.writeToStandardError("courier-bench: autobahn: case \(number): \(error)\n")
            }
        }
        do {
            try await drain(manager, endpoint("/updateReports", query: [URLQueryItem(name: "agent", value: options.agent)]))
        } catch {
            Bench.writeToStandardError("courier-bench: autobahn: updateReports: \(error)\n")
            return Bench.workloadFailure
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        print(
            "autobahn: \(ran) of \(count) cases run as agent \(options.agent) in \(String(format: "%.1f", seconds)) s; "
                + "\(ended) ended with an error (the server's report judges each); report updated")
        return Bench.success
    }

    /// The number of cases the server offers (one text message).
    private func caseCount(_ manager: SessionManager) async throws -> Int {
        let task = manager.webSocketTask(with: endpoint("/getCaseCount"))
        task.resume()
        var count: Int?
        for try await message in task.messages {
            if case .string(let text) = message { count = Int(text.trimmingCharacters(in: .whitespaces)) }
        }
        guard let count, count >= 0 else {
            throw CourierError(code: .invalidResponse, message: "getCaseCount sent no number", url: task.originalRequest.url)
        }
        return count
    }

    /// Case `number` as an echo client: every message sent back until the server closes. The
    /// error the task ended with, if any.
    private func runCase(_ number: Int, _ manager: SessionManager) async -> (any Error)? {
        let url = endpoint(
            "/runCase", query: [URLQueryItem(name: "case", value: String(number)), URLQueryItem(name: "agent", value: options.agent)])
        let task = manager.webSocketTask(with: url)
        task.maximumMessageSize = options.maximumMessageSize
        task.resume()
        let timeout = options.caseTimeout
        let watchdog = Task {
            try await Task.sleep(for: .seconds(timeout))
            task.cancel()
        }
        defer { watchdog.cancel() }
        do {
            for try await message in task.messages { try await task.send(message) }
            return nil
        } catch {
            return error
        }
    }

    /// Opens `url` and reads until the server closes.
    private func drain(_ manager: SessionManager, _ url: URL) async throws {
        let task = manager.webSocketTask(with: url)
        task.resume()
        for try await _ in task.messages {}
    }

    /// The server's base URL with `path` and `query`.
    private func endpoint(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: options.url, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.path = path
        components.queryItems = query.isEmpty ? nil : query
        return components.url ?? options.url
    }
}
