import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends from several Swift tasks at once over a real socket: a `send` that writes on its own
/// thread (``WebSocketConnectionState/sendNow(_:)``) and the connection's queue take turns
/// without reordering a sender's frames, losing one, or closing the socket under a write.
final class WebSocketConcurrentSendTests: WebSocketTaskTestCase {
    /// `count` messages from sender `sender`, every seventh 100 KiB long (so that the socket
    /// blocks and the queue takes over part of the writing), each naming its sender and index.
    private static func message(sender: Int, index: Int) -> String {
        let head = "\(sender) \(index) "
        return index % 7 == 0 ? head + String(repeating: "p", count: 100 * 1024) : head
    }

    /// The next `count` messages of `task`, as text (a binary message as an empty string).
    private static func receiveTexts(_ count: Int, from task: WebSocketTask) async throws -> [String] {
        var texts: [String] = []
        for _ in 0..<count {
            if case .string(let text) = try await task.receive() { texts.append(text) } else { texts.append("") }
        }
        return texts
    }

    func testConcurrentSendersEachKeepTheirOrderAndNothingIsLost() async throws {
        // Given the echo endpoint and four senders of 150 messages each, some of them large
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.maximumMessageSize = 1 << 20
        task.resume()
        let senders = 4
        let perSender = 150

        // When they all send at once while the echo is read
        async let received = Self.receiveTexts(senders * perSender, from: task)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in 0..<perSender { try await task.send(.string(Self.message(sender: sender, index: index))) }
                }
            }
            try await group.waitForAll()
        }

        // Then every message comes back whole, each sender's in the order it sent them
        let texts = try await received
        var next = [Int](repeating: 0, count: senders)
        for echoed in texts {
            let fields = echoed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            let sender = try XCTUnwrap(Int(fields[0]))
            let index = try XCTUnwrap(Int(fields[1]))
            XCTAssertEqual(index, next[sender], "sender \(sender) out of order")
            XCTAssertEqual(echoed, Self.message(sender: sender, index: index))
            next[sender] = index + 1
        }
        XCTAssertEqual(next, [Int](repeating: perSender, count: senders))
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testACloseRacingSendersCompletesOnceAndRefusesLaterSends() async throws {
        // Given an open connection and senders that keep sending
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("open"))
        _ = try await task.receive()

        // When the client closes while they send
        let outcomes = try await withThrowingTaskGroup(of: (sent: Int, refused: Bool).self) { group in
            for sender in 0..<3 {
                group.addTask {
                    var sent = 0
                    do {
                        for index in 0..<2_000 {
                            // Small: the echoes stay under the receive buffer's limit unread.
                            try await task.send(.string("\(sender) \(index)"))
                            sent += 1
                        }
                    } catch let error as CourierError {
                        XCTAssertEqual(error.code, .cancelled)
                        return (sent, true)
                    }
                    return (sent, false)
                }
            }
            try await Task.sleep(for: .milliseconds(5))
            task.cancel(with: .normalClosure, reason: nil)
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Then the task completes once, cleanly, and a send after the close is refused
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(completions(of: task).count, 1)
        XCTAssertEqual(outcomes.count, 3)
        do {
            try await task.send(.string("late"))
            XCTFail("a send after the close went through")
        } catch {
            XCTAssertEqual(error.code, .cancelled)
        }
    }
}
