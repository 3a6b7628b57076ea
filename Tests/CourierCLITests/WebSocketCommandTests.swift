import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `courier ws`: stdin's lines out as messages, messages in printed one per line, run as people
/// run it against the test server's `/ws/echo` and scripted `WebSocketTestServer`s.
final class WebSocketCommandTests: CommandLineTestCase {
    /// `ws://127.0.0.1:<port>/ws/echo` of the test server.
    private var echoURL: String {
        var components = URLComponents(url: server.url("/ws/echo"), resolvingAgainstBaseURL: false)!
        components.scheme = "ws"
        return components.url!.absoluteString
    }

    /// Runs `courier ws` with `input` on stdin; with `keepOpen`, stdin stays open (no end of input).
    private func ws(
        _ arguments: [String], input: Data = Data(), keepOpen: Bool = false, timeout: TimeInterval = 30
    ) throws
        -> (outcome: Outcome, stdout: Data)
    {
        let pipe = Pipe()
        let child = try start(["ws"] + arguments, standardInput: pipe.fileHandleForReading)
        pipe.fileHandleForWriting.write(input)
        if !keepOpen { try pipe.fileHandleForWriting.close() }
        let outcome = finish(child, timeout: timeout)
        try? pipe.fileHandleForWriting.close()
        return (outcome, (try? Data(contentsOf: child.stdout)) ?? Data())
    }

    // MARK: - Messages

    /// Given lines on stdin, when it ends, then each is echoed on its own line, the command closes
    /// with 1000 and exits 0 once the server answered.
    func testLinesAreEchoedOnePerLineAndTheEndOfInputClosesWith1000() throws {
        let (result, _) = try ws([echoURL], input: Data("hello\nwörld\n\nlast without newline".utf8))
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, "hello\nwörld\n\nlast without newline\n", "every line, the empty one too")
        XCTAssertEqual(result.err, "")
    }

    func testTheClientsCloseFrameIs1000AndTheOfferAndHeadersAreSent() throws {
        let echo = try WebSocketTestServer { _, _ in .init(handshake: .accept(subprotocol: "chat"), steps: [.echo]) }
        defer { echo.stop() }
        let (result, _) = try ws(
            ["--protocol", "chat", "--protocol", "superchat", "-H", "X-Trace: 7", echo.url("/").absoluteString],
            input: Data("one\r\ntwo\n".utf8))
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, "one\ntwo\n", "a \\r before the newline is dropped")
        XCTAssertEqual(echo.requests.first?.header("Sec-WebSocket-Protocol"), "chat, superchat")
        XCTAssertEqual(echo.requests.first?.header("X-Trace"), "7")
        let frames = echo.receivedFrames.map(\.frame)
        XCTAssertEqual(frames.map(\.opcode), [1, 1, 8])
        XCTAssertEqual(frames.last?.closeCode, 1000)
    }

    /// -n: exits after N messages even though stdin stays open and the server has more to say.
    func testCountExitsAfterNMessagesWithANormalClose() throws {
        let server = try WebSocketTestServer(
            script: .init(steps: (1...5).map { .send(.text("m\($0)")) } + [.awaitClose()]))
        defer { server.stop() }
        let started = Date()
        let (result, _) = try ws(["-n", "2", server.url("/").absoluteString], keepOpen: true, timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, "m1\nm2\n")
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1000)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    func testBinaryLinesGoOutAsBinaryAndBinaryMessagesPrintAsIsOrAsHex() throws {
        let server = try WebSocketTestServer(
            script: .init(steps: [.read(count: 1), .send(.binary(Data([0x00, 0xFF, 0x41]))), .awaitClose()]))
        defer { server.stop() }
        let (plain, stdout) = try ws(["--binary", server.url("/").absoluteString], input: Data("ab\n".utf8))
        XCTAssertEqual(plain.status, 0, plain.err)
        XCTAssertEqual(stdout, Data([0x00, 0xFF, 0x41, 0x0A]), "the bytes as they are, then a newline")
        XCTAssertEqual(server.receivedFrames.first?.frame.opcode, 2)
        XCTAssertEqual(server.receivedFrames.first?.frame.payload, Data("ab".utf8))

        let (hex, _) = try ws(["--binary", "--hex", server.url("/").absoluteString], input: Data("ab\n".utf8))
        XCTAssertEqual(hex.status, 0, hex.err)
        XCTAssertEqual(hex.out, "00ff41\n")
    }

    // MARK: - How it ends

    func testAServerCloseCodeOtherThanNormalIsReportedAndExits4() throws {
        let server = try WebSocketTestServer(
            script: .init(steps: [.send(.text("last words")), .send(.close(4000, reason: "maintenance")), .read(count: 1)]))
        defer { server.stop() }
        let url = server.url("/?token=hunter2").absoluteString
        let (result, _) = try ws([url], keepOpen: true)
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(result.out, "last words\n")
        XCTAssertEqual(
            errorLines(result.err),
            ["courier: the server closed the WebSocket with code 4000 (maintenance) (\(server.url("/?token=***").absoluteString))"])
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 4000, "the client echoes the server's code")
    }

    func testAServerThatClosesWith1001OrNoCodeEndsWith0() throws {
        for code: UInt16? in [1001, nil] {
            let server = try WebSocketTestServer(script: .init(steps: [.send(.close(code)), .read(count: 1)]))
            defer { server.stop() }
            let (result, _) = try ws([server.url("/").absoluteString], keepOpen: true)
            XCTAssertEqual(result.status, 0, "\(String(describing: code)): \(result.err)")
            XCTAssertEqual(result.err, "")
        }
    }

    /// Ctrl-C closes with 1001 (going away), waits for the server's answer and exits 130 quietly.
    func testSIGINTClosesWith1001AndExits130() throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("hi")), .awaitClose()]))
        defer { server.stop() }
        let pipe = Pipe()
        let child = try start(["ws", server.url("/").absoluteString], standardInput: pipe.fileHandleForReading)
        waitUntil("the first message", timeout: 10) { ((try? Data(contentsOf: child.stdout)) ?? Data()) == Data("hi\n".utf8) }

        kill(child.process.processIdentifier, SIGINT)

        let result = finish(child, timeout: 10)
        try? pipe.fileHandleForWriting.close()
        XCTAssertEqual(result.status, 130, result.err)
        XCTAssertEqual(result.err, "")
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1001)
    }

    func testARefusedHandshakeIsAnHTTPErrorWithTheURLMasked() throws {
        let server = try WebSocketTestServer(script: .init(handshake: .status(403), steps: []))
        defer { server.stop() }
        let (result, _) = try ws(
            ["--redact-param", "session", server.url("/chat?session=abc123&access_token=hunter2").absoluteString])
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertEqual(
            errorLines(result.err),
            ["courier: HTTP 403 Forbidden from \(server.url("/chat?session=***&access_token=***").absoluteString)"])
    }

    func testAWrongAcceptKeyIsAProtocolError() throws {
        let server = try WebSocketTestServer(script: .init(handshake: .wrongAcceptKey, steps: []))
        defer { server.stop() }
        let (result, _) = try ws([server.url("/").absoluteString])
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertTrue(result.err.hasPrefix("courier: the server broke the WebSocket protocol: "), result.err)
        XCTAssertEqual(errorLines(result.err).count, 1, result.err)
    }

    /// A peer that stops answering (no pong, nothing at all) is found by --ping: exit 3, timed out.
    func testADeadPeerWithPingEndsWithTheTimeoutExitCode() throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("hi"))], ending: .hang))
        defer { server.stop() }
        let started = Date()
        let (result, _) = try ws(["--ping", "0.3", server.url("/").absoluteString], keepOpen: true, timeout: 20)
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertEqual(result.out, "hi\n")
        XCTAssertTrue(result.err.hasPrefix("courier: timed out: "), result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "found within 2 x the interval, not never")
    }

    func testAConnectionRefusedIsANetworkErrorWithUserInfoMasked() throws {
        let (result, _) = try ws(["ws://user:secret@127.0.0.1:1/x?sig=abcdef"])
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertFalse(result.err.contains("secret"), result.err)
        XCTAssertFalse(result.err.contains("abcdef"), result.err)
        XCTAssertTrue(result.err.hasPrefix("courier: network error: "), result.err)
    }

    func testALineThatIsNotUTF8OrTooLongIsRefusedAndTheWebSocketClosedNormally() throws {
        let (notText, _) = try ws([echoURL], input: Data([0x66, 0xFF, 0x0A]))
        XCTAssertEqual(notText.status, ExitCode.failure, notText.err)
        XCTAssertEqual(
            errorLines(notText.err), ["courier: line 1 of stdin is not UTF-8, which a text message must be (--binary sends bytes)"])

        let (long, _) = try ws(["--max-message", "10", echoURL], input: Data("short\n0123456789a\n".utf8))
        XCTAssertEqual(long.status, ExitCode.failure, long.err)
        XCTAssertEqual(long.out, "short\n", "the lines before it are sent and echoed")
        XCTAssertEqual(errorLines(long.err), ["courier: line 2 of stdin is longer than --max-message (10 bytes)"])
    }

    func testAMessageOverMaxMessageClosesWith1009() throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text(String(repeating: "x", count: 100))), .awaitClose()]))
        defer { server.stop() }
        let (result, _) = try ws(["--max-message", "64", server.url("/").absoluteString], keepOpen: true)
        XCTAssertEqual(result.status, ExitCode.failure, result.err)
        XCTAssertEqual(result.out, "")
        // The client fails at once after writing its Close frame: the server may record it later.
        waitUntil("the client's Close frame", timeout: 5) { server.receivedFrames.last?.frame.closeCode != nil }
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1009)
    }

    // MARK: - The command line (pure)

    func testOptionsAreParsedAndMistakesAreUsageErrors() throws {
        let options = try XCTUnwrap(
            WebSocketCommand.Options.parse([
                "wss://h/x", "--binary", "--hex", "-n", "3", "--ping", "1.5", "--protocol", "a", "--max-message", "99", "-k",
            ]))
        XCTAssertEqual(options.url.absoluteString, "wss://h/x")
        XCTAssertEqual([options.binary, options.hex, options.tls.insecure], [true, true, true])
        XCTAssertEqual(options.count, 3)
        XCTAssertEqual(options.ping, 1.5)
        XCTAssertEqual(options.protocols, ["a"])
        XCTAssertEqual(options.maximumMessageSize, 99)
        XCTAssertNil(try WebSocketCommand.Options.parse(["--help"]))

        let mistakes: [([String], String)] = [
            ([], "ws needs a URL"),
            (["ftp://h/"], "'ftp://h/' is not a ws:// or wss:// URL"),
            (["ws://h/", "ws://i/"], "ws takes one URL; unexpected 'ws://i/'"),
            (["ws://h/", "--protocol", "a b"], "--protocol takes a subprotocol name (a token), not 'a b'"),
            (["ws://h/", "--protocol", "a", "--protocol", "a"], "--protocol a is given twice"),
            (["ws://h/", "-H", "Sec-WebSocket-Protocol: a"], "-H Sec-WebSocket-Protocol is not allowed: use --protocol"),
            (["ws://h/", "-n", "0"], "-n takes a whole number 1 or more, not '0'"),
            (["ws://h/", "--ping", "0"], "--ping takes a number of seconds above 0, not '0'"),
            (["ws://h/", "--pingg", "1"], "unknown option '--pingg' for ws; did you mean --ping?"),
        ]
        for (arguments, message) in mistakes {
            XCTAssertThrowsError(try WebSocketCommand.Options.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual((error as? UsageError)?.message, message)
                XCTAssertEqual((error as? UsageError)?.help, "courier ws --help")
            }
        }
    }

    func testTheExitDecisionTable() {
        let url = URL(string: "ws://h/x?token=t")!
        let closed = { (code: UInt16?) in
            WebSocketCommand.exit(for: .closed(code: code.map(WebSocketCloseCode.init(rawValue:)), reason: nil), signal: nil, url: url)
        }
        XCTAssertEqual(closed(1000).status, 0)
        XCTAssertEqual(closed(1001).status, 0)
        XCTAssertEqual(closed(1005).status, 0)
        XCTAssertEqual(closed(nil).status, 0)
        XCTAssertEqual(closed(1011).status, ExitCode.http)
        XCTAssertEqual(closed(4000).status, ExitCode.http)
        XCTAssertNil(closed(1000).line)
        let interrupted = WebSocketCommand.exit(for: .closed(code: .goingAway, reason: nil), signal: SIGINT, url: url)
        XCTAssertEqual(interrupted.status, 130)
        let cancelled = WebSocketCommand.exit(for: .failed(CourierError(code: .cancelled, message: "x")), signal: SIGTERM, url: url)
        XCTAssertEqual(cancelled.status, 143)
        XCTAssertNil(cancelled.line)
        let dead = WebSocketCommand.exit(for: .failed(CourierError(code: .timedOut, message: "silent")), signal: nil, url: url)
        XCTAssertEqual(dead.status, ExitCode.network)
        XCTAssertEqual(WebSocketCommand.exit(for: .reachedCount, signal: nil, url: url).status, 0)
        XCTAssertEqual(WebSocketCommand.exit(for: .writeFailed(reason: "Broken pipe", messages: 1), signal: nil, url: url).status, 6)
        XCTAssertEqual(WebSocketCommand.exit(for: .badInput("bad"), signal: nil, url: url).status, 1)
    }

    func testMessagesBecomeLinesAndLinesBecomeMessages() {
        XCTAssertEqual(WebSocketCommand.line(for: .string("é"), hex: true), Data("é\n".utf8), "--hex is for binary only")
        XCTAssertEqual(WebSocketCommand.line(for: .data(Data([0xAB, 0x01])), hex: true), Data("ab01\n".utf8))
        XCTAssertEqual(WebSocketCommand.line(for: .data(Data([0xAB])), hex: false), Data([0xAB, 0x0A]))
        let bytes: ArraySlice<UInt8> = [0x61, 0xFF]
        // Each line made a message is what `line(for:hex:)` prints back.
        let binary = try? StandardInputLines.message(bytes, number: 1, binary: true).get()
        XCTAssertEqual(binary.map { WebSocketCommand.line(for: $0, hex: true) }, Data("61ff\n".utf8))
        XCTAssertThrowsError(try StandardInputLines.message(bytes, number: 4, binary: false).get()) { error in
            XCTAssertEqual((error as? StandardInputLines.Refusal)?.reason.hasPrefix("line 4 of stdin is not UTF-8"), true)
        }
        let text = try? StandardInputLines.message([0x61], number: 1, binary: false).get()
        XCTAssertEqual(text.map { WebSocketCommand.line(for: $0, hex: true) }, Data("a\n".utf8), "text, not hex")
    }
}
