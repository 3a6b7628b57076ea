import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier
import CourierSupport

/// `courier ws <url>`: stdin's lines sent as messages, each message received one write on stdout,
/// through the library's ``WebSocketTask``; the exit code says how it ended (``exit(for:signal:url:)``).
/// Unsupervised, as `events` (Docs/CommandLine.md, "`courier ws`").
struct WebSocketCommand {
    let options: Options

    init(_ options: Options) { self.options = options }

    /// How the conversation ended, as the exit decision sees it.
    enum Ending: Sendable {
        /// A closing handshake completed (either side's); the server's code, `nil` if none came.
        case closed(code: WebSocketCloseCode?, reason: Data?)
        /// `-n` messages were received (and the WebSocket closed with 1000).
        case reachedCount
        /// The task failed (handshake refused, network, protocol, a dead peer, cancelled).
        case failed(CourierError)
        /// stdout could not be written.
        case writeFailed(reason: String, messages: Int)
        /// A line of stdin could not be sent as asked (not UTF-8, or too long).
        case badInput(String)
    }

    /// Sends stdin and prints messages until the WebSocket closes or fails, `-n` is reached or a
    /// signal stops it; returns the exit code (every message is already printed).
    func run() -> Int32 {
        // A reader that goes away (`| head -n 3`) is a failed write said on stderr, not a death.
        signal(SIGPIPE, SIG_IGN)
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }

        var configuration = SessionManager.Configuration()
        configuration.tls = options.tls.announced()
        // A close before the 101 would fail the task as cancelled: the end of stdin waits for
        // the handshake's outcome (echo hello | courier ws URL must print the echo).
        let settled = DispatchSemaphore(value: 0)
        let completed = DispatchSemaphore(value: 0)
        configuration.eventMonitors = [
            ClosureEventMonitor(
                onComplete: { _, _ in
                    settled.signal()
                    completed.signal()
                },
                onEvent: { _, event in if case .response = event { settled.signal() } })
        ]
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        let task = makeTask(manager)
        task.resume()
        let refused = Locked<String?>(nil)
        let (binary, limit) = (options.binary, options.maximumMessageSize)
        Task {
            let ending = await task.sendLines(from: STDIN_FILENO, binary: binary)
            guard ending != .taskEnded else { return }  // the receiving loop reports why
            refused.set(StandardInputLines.refusal(ending, limit: limit))
            // End of stdin or a refused line: a normal close once the handshake is decided; the
            // receiving loop ends with the server's answer.
            DispatchQueue.global().async {
                settled.wait()
                task.close(withCloseCode: .normalClosure, reason: nil)
            }
        }
        // A signal closes with 1001 ("going away"); the server's answer ends the receiving loop.
        let options = options
        let ending = stops.wait(stop: { task.close(withCloseCode: .goingAway, reason: nil) }) {
            await Self.receive(task, options: options)
        }
        // The sequence ends when the outcome is decided; the task completes once its last frame
        // (our Close, or the echo of the server's) is written and TCP is closed. Exiting before
        // would cut that frame off. Bounded by the close timeout (5 s), with room.
        _ = completed.wait(timeout: .now() + .seconds(10))
        // A refused line is why it closed.
        let end = refused.current.map(Ending.badInput) ?? ending ?? .failed(CourierError(code: .network, message: "ended without a result"))
        let decision = Self.exit(for: end, signal: stops.signal, url: options.url)
        return decision.line.map { CourierCommand.fail($0, decision.status) } ?? decision.status
    }

    private func makeTask(_ manager: SessionManager) -> WebSocketTask {
        var request = URLRequest(url: options.url)
        for header in options.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        let task = manager.webSocketTask(with: request, protocols: options.protocols)
        task.maximumMessageSize = options.maximumMessageSize
        if let ping = options.ping { task.options.pingInterval = .seconds(roundingUp: ping) }
        return task
    }

    /// Prints messages until the sequence ends or fails, or `-n` were printed (then closes with
    /// 1000 and waits for the server's answer, whatever else arrives meanwhile).
    private static func receive(_ task: WebSocketTask, options: Options) async -> Ending {
        var count = 0
        do {
            for try await message in task.messages {
                // One write per message: a reader sees each whole, as soon as it is in.
                let sent = GetCommand.writeToStandardOutput(Self.line(for: message, hex: options.hex))
                if let reason = sent.failure { return .writeFailed(reason: reason, messages: count) }
                count += 1
                if let limit = options.count, count >= limit {
                    task.close(withCloseCode: .normalClosure, reason: nil)
                    while (try? await task.receive()) != nil {}
                    return .reachedCount
                }
            }
            return .closed(code: task.webSocketCloseCode, reason: task.closeReason)
        } catch {
            // The sequence throws the task's CourierError (WebSocketMessages.swift).
            return .failed((error as? CourierError) ?? CourierError(code: .network, message: "\(error)", url: task.originalRequest.url))
        }
    }

    /// The bytes written for one message: text as UTF-8, binary as it is or as lowercase hex,
    /// then a newline.
    static func line(for message: URLSessionWebSocketTask.Message, hex: Bool) -> Data {
        var bytes: Data
        switch message {
        case .string(let text): bytes = Data(text.utf8)
        case .data(let data):
            bytes = hex ? Data(data.map { String(format: "%02x", $0) }.joined().utf8) : data
        @unknown default: bytes = Data()
        }
        bytes.append(0x0A)
        return bytes
    }

    /// The exit code and the line said on stderr (without `courier: `) for `ending`, after a stop
    /// `signal` if one came. Pure.
    static func exit(for ending: Ending, signal: Int32?, url: URL) -> (status: Int32, line: String?) {
        switch ending {
        case .reachedCount:
            return (ExitCode.success, nil)
        case .closed(let code, let reason):
            if let signal { return (ExitCode.forSignal(signal), nil) }
            // 1005: a Close frame without a code, which §7.1.5 makes a normal end too.
            guard let code, ![.normalClosure, .goingAway, .noStatusReceived].contains(code) else {
                return (ExitCode.success, nil)
            }
            let why = reason.flatMap { String(data: $0, encoding: .utf8) }.flatMap { $0.isEmpty ? nil : $0 }
            return (
                ExitCode.http,
                "the server closed the WebSocket with code \(code.rawValue)\(why.map { " (\($0))" } ?? "") "
                    + "(\(GetCommand.displayURL(url)))"
            )
        case .failed(let error):
            if error.isCancellation, let signal { return (ExitCode.forSignal(signal), nil) }
            return (ExitCode.forError(error), errorLine(error, url: url))
        case .writeFailed(let reason, let messages):
            return (
                ExitCode.fileSystem, "cannot write to stdout (\(reason)) after \(messages) \(messages == 1 ? "message" : "messages")"
            )
        case .badInput(let reason):
            return (ExitCode.failure, reason)
        }
    }

    /// `get`'s error line, but a server that breaks the WebSocket protocol is not said to send
    /// invalid HTTP.
    static func errorLine(_ error: CourierError, url: URL) -> String {
        guard error.code == .invalidResponse else { return GetCommand.errorLine(error, requestURL: url, retryPolicy: nil) }
        return "the server broke the WebSocket protocol: \(error.message) (\(GetCommand.displayURL(error.response?.url ?? url)))"
    }
}
