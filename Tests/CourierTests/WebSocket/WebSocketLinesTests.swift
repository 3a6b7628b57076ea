import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `WebSocketTask.sendLines(from:binary:)`: a descriptor's lines as messages, against `TestServer`'s
/// `/ws/echo` over real sockets; the line-to-message rule as a pure function.
final class WebSocketLinesTests: WebSocketTaskTestCase {
    /// A pipe holding `bytes`, its write end closed: the read end, to be closed by the caller.
    private func pipeHolding(_ bytes: [UInt8]) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        XCTAssertEqual(bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }, bytes.count)
        close(ends[1])
        return ends[0]
    }

    func testEachLineOfAPipeGoesOutAsOneTextMessageInOrder() async throws {
        // Given the echo endpoint and a pipe with three lines, one ended by CRLF, the last by nothing
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        let input = try pipeHolding(Array("first\r\nsecond, Grüße\n\nlast".utf8))
        defer { close(input) }

        // When its lines are sent
        let ending = await task.sendLines(from: input)

        // Then the input ended, and each line came back as a text message without its end
        XCTAssertEqual(ending, .inputEnded)
        var echoed: [String] = []
        for _ in 0..<4 {
            let message = try await task.receive()
            echoed.append(text(message) ?? "not text")
        }
        XCTAssertEqual(echoed, ["first", "second, Grüße", "", "last"])
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testBinaryLinesGoOutAsTheirBytes() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        let input = try pipeHolding([0x61, 0xFF, 0x0A, 0x00])
        defer { close(input) }

        let ending = await task.sendLines(from: input, binary: true)

        XCTAssertEqual(ending, .inputEnded)
        let first = try await task.receive()
        let second = try await task.receive()
        XCTAssertEqual(data(first), Data([0x61, 0xFF]))
        XCTAssertEqual(data(second), Data([0x00]))
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testALineThatIsNotUTF8StopsTheSendingAtItsNumber() async throws {
        // Given a text line, then one that is not UTF-8, then another
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        let input = try pipeHolding(Array("ok\n".utf8) + [0xFF, 0x0A] + Array("never\n".utf8))
        defer { close(input) }

        // When its lines are sent as text
        let ending = await task.sendLines(from: input)

        // Then the second line is named, and only the first went out
        XCTAssertEqual(ending, .notUTF8(line: 2))
        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "ok")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testALineLongerThanTheLargestMessageStopsTheSending() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.maximumMessageSize = 4
        task.resume()
        let input = try pipeHolding(Array("abcd\nabcde\n".utf8))
        defer { close(input) }

        let ending = await task.sendLines(from: input)

        XCTAssertEqual(ending, .tooLong(line: 2))
        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "abcd")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testATaskThatHasEndedEndsTheSending() async throws {
        // Given a WebSocket that was closed and completed
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("hello"))
        _ = try await task.receive()
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        let input = try pipeHolding(Array("late\n".utf8))
        defer { close(input) }

        // When lines are sent, Then nothing can be, and the sending says so
        let ending = await task.sendLines(from: input)
        XCTAssertEqual(ending, .taskEnded)
    }

    func testALineBecomesTextWhenItIsUTF8AndBytesWhenBinary() {
        XCTAssertEqual(WebSocketTask.message(line: Array("é".utf8)[...], binary: false).flatMap(text), "é")
        XCTAssertNil(WebSocketTask.message(line: [0x61, 0xFF], binary: false))
        XCTAssertEqual(WebSocketTask.message(line: [0x61, 0xFF], binary: true).flatMap(data), Data([0x61, 0xFF]))
        XCTAssertEqual(WebSocketTask.message(line: [], binary: true).flatMap(data), Data())
    }
}
