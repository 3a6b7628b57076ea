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

/// `courier events`: Server-Sent Events as JSON lines on stdout, reconnecting like the library
/// with each reconnection said on stderr, run as people run it against the test server's `/sse`.
final class EventsCommandTests: CommandLineTestCase {
    private func events(_ arguments: [String], timeout: TimeInterval = 30) throws -> Outcome {
        try run(["events"] + arguments, timeout: timeout)
    }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    // MARK: - Events and reconnection

    /// The server drops the connection after every second event; the command reconnects with the
    /// last id each time, the ids on stdout run on without a gap or a repeat, and the 204 the
    /// server answers once everything was sent ends the command with 0.
    func testEventsAreJSONLinesAcrossReconnectionsUntilThe204() throws {
        let url = server.url("/sse?count=6&drop_after=2&retry=100&event=tick&data_lines=2&comments=1").absoluteString
        let result = try events([url])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(
            lines(result.out),
            (1...6).map { #"{"id":"\#($0)","event":"tick","data":"event \#($0) line 1\nevent \#($0) line 2"}"# },
            "one line per event, keys in order, data lines joined with \\n")
        for line in lines(result.out) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            XCTAssertEqual(object?.count, 3, line)
        }
        XCTAssertEqual(server.requests.map { $0.header("Last-Event-ID") }, [nil, "2", "4", "6"])
        let reconnections = errorLines(result.err)
        XCTAssertEqual(reconnections.count, 3, result.err)
        for (line, id) in zip(reconnections, ["2", "4", "6"]) {
            XCTAssertTrue(line.hasPrefix("courier: "), line)
            XCTAssertTrue(line.contains("; reconnecting with Last-Event-ID: \(id) after waiting "), line)
        }
        XCTAssertTrue(reconnections[0].hasPrefix("courier: network error: "), "a dropped connection: \(reconnections[0])")
        XCTAssertTrue(reconnections[0].hasSuffix(" (reconnection 1)"), reconnections[0])
    }

    func testSilentLeavesOutTheReconnectionLines() throws {
        let result = try events(["-s", server.url("/sse?count=4&drop_after=2&retry=50").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(lines(result.out).count, 4)
        XCTAssertEqual(result.err, "")
    }

    func testMaxEventsStopsAfterN() throws {
        let started = Date()
        let result = try events(["-n", "3", server.url("/sse?count=1000&interval_ms=20").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(lines(result.out), (1...3).map { #"{"id":"\#($0)","event":"message","data":"event \#($0)"}"# })
        XCTAssertEqual(result.err, "")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "not the 20 s the whole stream takes")
    }

    func testLastEventIDStartsAfterIt() throws {
        let result = try events(["--last-event-id", "3", "--retry-delay", "0.05", server.url("/sse?count=5").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(lines(result.out).compactMap { $0.split(separator: ",").first }, [#"{"id":"4""#, #"{"id":"5""#])
        XCTAssertEqual(server.requests.first?.header("Last-Event-ID"), "3")
    }

    /// A connection that goes silent for longer than --idle-timeout is dropped and made again.
    func testASilentConnectionIsDroppedAndRemade() throws {
        let result = try events(
            [
                "--idle-timeout", "0.5", "--retry-delay", "0.05", "-n", "3",
                server.url("/sse?count=10&interval_ms=3000").absoluteString,
            ])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(lines(result.out).count, 3)
        let reconnections = errorLines(result.err)
        XCTAssertEqual(reconnections.count, 2, result.err)
        XCTAssertTrue(reconnections.allSatisfy { $0.hasPrefix("courier: timed out: no bytes arrived for 0.5 s") }, result.err)
        XCTAssertTrue(reconnections[1].contains("with Last-Event-ID: 2"), result.err)
    }

    // MARK: - Failures

    func testARefusedResponseIsAnHTTPError() throws {
        let missing = server.url("/status/404")
        let result = try events([missing.absoluteString])
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertEqual(errorLines(result.err), ["courier: HTTP 404 Not Found from \(missing)"])
        XCTAssertEqual(server.requests.count, 1, "an error status is not reconnected to")

        let json = try events([server.url("/get").absoluteString])
        XCTAssertEqual(json.status, ExitCode.http, json.err)
        XCTAssertTrue(json.err.contains("text/event-stream"), json.err)
    }

    /// A 200 of the wrong type is refused once (exit 4), whether or not it has a body: with no
    /// length and no body FoundationNetworking reports no response at all, which once made the
    /// command reconnect to it 6 times and end with "no HTTP response was received" (issue 31).
    func testAWrongTypeAnswerIsRefusedOnceWithOrWithoutABody() throws {
        for body in ["", "<html>not a stream</html>"] {
            let html = try ScriptedServer { _, _ in
                .response(status: 200, headers: [("Content-Type", "text/html")], body: Data(body.utf8))
            }
            defer { html.stop() }
            let result = try events(["--retry-delay", "0.05", html.url("/sse").absoluteString])
            XCTAssertEqual(result.status, ExitCode.http, "body \"\(body)\": \(result.err)")
            XCTAssertEqual(result.out, "")
            XCTAssertEqual(html.requests.count, 1, "a refused answer is not reconnected to (body \"\(body)\"): \(result.err)")
            XCTAssertEqual(errorLines(result.err).count, 1, result.err)
            XCTAssertTrue(result.err.contains("text/html") && result.err.contains("text/event-stream"), result.err)
        }
    }

    /// An event stream never retries a status, so a long Retry-After is not given as the reason it stopped.
    func testARefusedStatusWithALongRetryAfterIsTheStatusAlone() throws {
        let busy = server.url("/status/503?retry_after=999999")
        let result = try events([busy.absoluteString])
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(errorLines(result.err), ["courier: HTTP 503 Service Unavailable from \(busy)"])
        XCTAssertEqual(server.requests.count, 1)
    }

    func testGivingUpAfterTheReconnectionsIsANetworkError() throws {
        let gone = try TestServer()
        let url = gone.url("/sse").absoluteString
        gone.stop()  // nothing listens there now: every connection is refused

        let result = try events(["--max-reconnects", "2", "--retry-delay", "0.05", url])
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertEqual(result.out, "")
        let lines = errorLines(result.err)
        XCTAssertEqual(lines.count, 3, result.err)
        XCTAssertTrue(lines[0].contains("reconnecting without Last-Event-ID (no event id yet)"), lines[0])
        XCTAssertTrue(lines[2].hasPrefix("courier: network error: "), lines[2])
        XCTAssertTrue(lines[2].hasSuffix("; gave up after 2 failed reconnections in a row"), lines[2])

        let never = try events(["--max-reconnects", "0", url])
        XCTAssertEqual(never.status, ExitCode.network, never.err)
        XCTAssertEqual(errorLines(never.err).count, 1, never.err)
        XCTAssertTrue(never.err.hasSuffix("; not reconnecting (--max-reconnects 0)\n"), never.err)
    }

    /// A server that keeps ending its response without an event: the library gives up with an
    /// error, and the command says so and fails.
    func testAServerThatKeepsEndingEmptyResponsesIsGivenUpOn() throws {
        let empty = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Type", "text/event-stream"), ("Content-Length", "0")], body: Data())
        }
        defer { empty.stop() }
        let result = try events(["--max-reconnects", "2", "--retry-delay", "0.05", empty.url("/sse").absoluteString])
        XCTAssertEqual(result.status, ExitCode.forError(CourierError(code: .invalidResponse, message: "")), result.err)
        XCTAssertNotEqual(result.status, ExitCode.success)
        XCTAssertEqual(empty.requests.count, 3, result.err)
        XCTAssertTrue(errorLines(result.err).last?.contains("without an event") ?? false, result.err)

        let once = try events(["--max-reconnects", "0", empty.url("/sse").absoluteString])
        XCTAssertEqual(once.status, 0, "asked for one connection, and it ended cleanly: \(once.err)")
    }

    /// A server that asks for `retry: 0` and drops the connection after every event: each
    /// connection delivers, so only the minimum delay (0.5 s) and the rate bound hold the
    /// command back (it reconnected 844–4,507 times in 3 s without them).
    func testRetryZeroWithOneEventPerConnectionIsNotAHotLoop() throws {
        let child = try start(["events", "-s", server.url("/sse?count=100000&drop_after=1&retry=0").absoluteString])
        Thread.sleep(forTimeInterval: 2)
        kill(child.process.processIdentifier, SIGINT)
        let stopped = finish(child, timeout: 15)
        XCTAssertEqual(stopped.status, 130, stopped.err)
        XCTAssertLessThanOrEqual(server.requests.count, 6, "at most about two connections a second")
        XCTAssertGreaterThanOrEqual(server.requests.count, 3)
        XCTAssertEqual(lines(stopped.out).count, server.requests.count, "one event per connection")
    }

    func testSIGINTAndSIGTERMStopQuietlyWithWholeLinesOnStdout() throws {
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let child = try start(["events", server.url("/sse?count=1000&interval_ms=50").absoluteString])
            waitUntil("two events", timeout: 20) {
                ((try? String(contentsOf: child.stdout, encoding: .utf8)) ?? "").filter { $0 == "\n" }.count >= 2
            }
            kill(child.process.processIdentifier, signal)
            let stopped = finish(child, timeout: 15)
            XCTAssertEqual(stopped.reason, .exit, stopped.err)
            XCTAssertEqual(stopped.status, status, stopped.err)
            XCTAssertEqual(stopped.err, "", "quietly")
            XCTAssertTrue(stopped.out.hasSuffix("\n"), "whole lines only: \(stopped.out)")
            for (index, line) in lines(stopped.out).enumerated() {
                XCTAssertEqual(line, #"{"id":"\#(index + 1)","event":"message","data":"event \#(index + 1)"}"#)
            }
        }
    }

    // MARK: - Command line

    func testHelpAndUsage() throws {
        let help = try run(["events", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.out.hasPrefix("courier events <url> [options]"), help.out)
        XCTAssertEqual(try run(["help", "events"]).out, help.out)
        XCTAssertTrue(try run(["--help"]).out.contains("courier events <url>"))
        XCTAssertTrue(try run([]).err.contains("courier events <url>"), "the short usage lists it")

        let typo = try run(["evnets", "http://h/"])
        XCTAssertEqual(typo.status, ExitCode.usage)
        XCTAssertTrue(typo.err.hasPrefix("courier: unknown command 'evnets'; did you mean 'events'?"), typo.err)
        let option = try run(["events", "--max-reconect", "1", "http://h/"])
        XCTAssertEqual(
            errorLines(option.err),
            [
                "courier: unknown option '--max-reconect' for events; did you mean --max-reconnects?",
                "Run 'courier events --help' for usage.",
            ])
    }

    func testOptions() throws {
        func parse(_ arguments: [String]) throws -> EventsCommand.Options {
            try XCTUnwrap(try EventsCommand.Options.parse(arguments))
        }
        let plain = try parse(["http://h/sse"])
        XCTAssertEqual(plain.maxReconnects, 5)
        XCTAssertEqual(plain.retryDelay, 3)
        XCTAssertNil(plain.idleTimeout)
        XCTAssertNil(plain.maxEvents)
        XCTAssertNil(plain.lastEventID)
        XCTAssertFalse(plain.silent)

        let full = try parse(
            [
                "-H", "Authorization: Bearer t", "http://h/sse", "--last-event-id=41", "--max-reconnects", "0",
                "--retry-delay", "0.5", "--idle-timeout", "2", "-n", "7", "-s",
            ])
        XCTAssertEqual(full.headers.map { "\($0.name): \($0.value)" }, ["Authorization: Bearer t"])
        XCTAssertEqual(full.lastEventID, "41")
        XCTAssertEqual(full.maxReconnects, 0)
        XCTAssertEqual(full.retryDelay, 0.5)
        XCTAssertEqual(full.idleTimeout, 2)
        XCTAssertEqual(full.maxEvents, 7)
        XCTAssertTrue(full.silent)
        XCTAssertNil(try EventsCommand.Options.parse(["-h"]))

        for (arguments, message) in [
            ([String](), "events needs a URL"),
            (["http://h/", "http://i/"], "events takes one URL; unexpected 'http://i/'"),
            (["ftp://h/"], "'ftp://h/' is not an http:// or https:// URL"),
            (["-n", "0", "http://h/"], "-n takes a whole number 1 or more, not '0'"),
            (["--max-reconnects", "-1", "http://h/"], "--max-reconnects takes a whole number 0 or more, not '-1'"),
            (["--retry-delay", "soon", "http://h/"], "--retry-delay takes a number of seconds 0 or more, not 'soon'"),
            (["--idle-timeout", "0", "http://h/"], "--idle-timeout takes a number of seconds above 0, not '0'"),
            (["--last-event-id", "a\nb", "http://h/"], #"--last-event-id takes an event id without control characters, not "a\nb""#),
            (
                ["-H", "Last-Event-ID: 4", "http://h/"],
                "-H Last-Event-ID is not allowed: use --last-event-id (courier sends the last id it saw on every reconnection itself)"
            ),
            (["-H", "Accept: text/plain", "http://h/"], "-H Accept is not allowed: courier events always asks for text/event-stream"),
            (["-s=1", "http://h/"], "unknown option '-s=1' for events"),
            (["--silent=yes", "http://h/"], "--silent takes no value"),
            (["http://h/", "-n"], "-n needs a value"),
        ] {
            XCTAssertThrowsError(try EventsCommand.Options.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual((error as? UsageError)?.message, message)
                XCTAssertEqual((error as? UsageError)?.help, "courier events --help")
            }
        }
    }

    func testJSONLinesEscapeWhatJSONRequires() throws {
        let text = "quote \" backslash \\ newline \n tab \t return \r bell \u{07} nul \u{00} unit \u{1F} del \u{7F} é 🚀 \u{2028}"
        let event = ServerSentEvent(event: "odd \"name\"", data: text, id: nil, lastEventID: "7\\8")
        let line = JSONLine.event(event)
        XCTAssertTrue(line.hasSuffix("}\n"))
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1, "one line")
        XCTAssertTrue(line.hasPrefix(#"{"id":"7\\8","event":"odd \"name\"","data":"quote \" backslash \\ newline \n tab \t"#), line)
        XCTAssertTrue(line.contains(#"bell \u0007 nul \u0000 unit \u001f"#), line)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        XCTAssertEqual(object, ["id": "7\\8", "event": "odd \"name\"", "data": text], "valid JSON that reads back the same")

        let anonymous = JSONLine.event(ServerSentEvent(data: ""))
        XCTAssertEqual(anonymous, #"{"id":null,"event":"message","data":""}"# + "\n", "no last event ID: null")
    }

    func testReconnectionLines() {
        XCTAssertEqual(
            ConnectionLog.reconnectionLine(reason: nil, waited: 3.04, lastEventID: "12", reconnection: 1),
            "courier: the server ended the response; reconnecting with Last-Event-ID: 12 after waiting 3.0 s (reconnection 1)")
        XCTAssertEqual(
            ConnectionLog.reconnectionLine(
                reason: CourierError(code: .timedOut, message: "no bytes arrived for 2 s (StreamPolicy.idleTimeout)"),
                waited: 12, lastEventID: nil, reconnection: 4),
            "courier: timed out: no bytes arrived for 2 s (StreamPolicy.idleTimeout); reconnecting without Last-Event-ID "
                + "(no event id yet) after waiting 12 s (reconnection 4)")
    }
}
