import Courier
import CourierSupport
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `websocket`: one `WebSocketTask` to an echo server. `--warmup` untimed messages, then
/// `--messages` text messages of `--size` bytes, one in flight, each timed from `send` to its
/// echo; then `--big-mib` binary messages of 1 MiB echoed one at a time; then `--connects` new
/// connections one after another (connect, one echo, close), each timed and its CPU counted.
/// Every echo must equal what was sent. The same shape as Docs/bench/ws-peers.py's clients, so the lines compare.
struct WebSocketWorkload {
    let options: BenchOptions

    /// One MiB, the peers' pattern (bytes 0…255 repeated).
    static let bigMessage = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        var configuration = SessionManager.Configuration()
        if let file = options.caFile { configuration.tls.default = TLSPolicy(trust: .system(adding: [.file(file)])) }
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        let task = manager.webSocketTask(with: options.url)
        task.maximumMessageSize = 2 << 20
        if let ping = options.pingSeconds { task.options.pingInterval = .milliseconds(Int64((ping * 1000).rounded())) }
        task.resume()

        let outcome = Locked<Result<(ResultLine.WebSocketEcho, seconds: Double, cpuSeconds: Double), BenchFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let run = Task { [options] in
            do {
                var measured = try await Self.measure(task, options: options)
                (measured.0.connectCPUSeconds, measured.0.connectSeconds) = try await Self.connects(manager, options: options)
                outcome.set(.success(measured))
            } catch let failure as BenchFailure {
                outcome.set(.failure(failure))
            } catch {
                outcome.set(.failure(BenchFailure("\(error)")))
            }
            done.signal()
        }
        guard deadline.wait(for: done), let result = outcome.current else {
            run.cancel()
            task.cancel()
            throw deadline.exceeded("echoing messages")
        }
        task.cancel(with: .normalClosure, reason: nil)
        let (echo, seconds, cpuSeconds) = try result.get()
        return ResultLine(
            client: options.client, workload: .websocket, seconds: seconds, cpuSeconds: cpuSeconds,
            maxRSSKiB: ResourceUsage.now().maxRSSKiB, configuration: options.configuration, metrics: .webSocket(echo))
    }

    private static func measure(
        _ task: WebSocketTask, options: BenchOptions
    ) async throws -> (
        ResultLine.WebSocketEcho, seconds: Double, cpuSeconds: Double
    ) {
        let small = String(repeating: "x", count: options.messageSize)
        for _ in 0..<options.warmup { try await echo(.string(small), on: task) }

        let start = ResourceUsage.now()
        let started = MonotonicClock.seconds()
        var latencies: [Double] = []
        latencies.reserveCapacity(options.messages)
        for _ in 0..<options.messages {
            let sent = MonotonicClock.seconds()
            try await echo(.string(small), on: task)
            latencies.append(MonotonicClock.seconds() - sent)
        }
        let smallCPU = ResourceUsage.now().cpuSeconds - start.cpuSeconds

        let bigStarted = MonotonicClock.seconds()
        for _ in 0..<options.bigMessages { try await echo(.data(bigMessage), on: task) }
        let ended = MonotonicClock.seconds()
        var figures = ResultLine.WebSocketEcho(
            latencies: latencies, smallCPUSeconds: smallCPU, bigMessages: options.bigMessages, bigSeconds: ended - bigStarted)
        let cpuSeconds = ResourceUsage.now().cpuSeconds - start.cpuSeconds
        if options.idleSeconds > 0 {
            // The whole process while the connection only waits (pings, when asked for, go on).
            let idleStart = ResourceUsage.now()
            let idleStarted = MonotonicClock.seconds()
            try await Task.sleep(for: .milliseconds(Int64((options.idleSeconds * 1000).rounded())))
            figures.idleCPUSeconds = ResourceUsage.now().cpuSeconds - idleStart.cpuSeconds
            figures.idleSeconds = MonotonicClock.seconds() - idleStarted
            // Still open: the echo answers after the wait.
            try await echo(.string(small), on: task)
        }
        return (figures, ended - started, cpuSeconds)
    }

    /// `--connects` connections one after another, each opened, used for one echo and closed (the
    /// server's Close frame awaited); the CPU and wall time of each.
    private static func connects(
        _ manager: SessionManager, options: BenchOptions
    ) async throws -> (cpu: [Double], wall: [Double]) {
        var cpu: [Double] = []
        var wall: [Double] = []
        for _ in 0..<options.connects {
            let startCPU = ResourceUsage.now().cpuSeconds
            let started = MonotonicClock.seconds()
            let task = manager.webSocketTask(with: options.url)
            task.resume()
            try await echo(.string("x"), on: task)
            task.close(withCloseCode: .normalClosure, reason: nil)
            for try await _ in task.messages {}
            wall.append(MonotonicClock.seconds() - started)
            cpu.append(ResourceUsage.now().cpuSeconds - startCPU)
        }
        return (cpu, wall)
    }

    /// Sends `message` and checks that the next message is the same.
    private static func echo(_ message: URLSessionWebSocketTask.Message, on task: WebSocketTask) async throws {
        try await task.send(message)
        let answer = try await task.receive()
        switch (message, answer) {
        case (.string(let sent), .string(let received)) where sent == received: return
        case (.data(let sent), .data(let received)) where sent == received: return
        default: throw BenchFailure("the echo differs from the message sent")
        }
    }
}
