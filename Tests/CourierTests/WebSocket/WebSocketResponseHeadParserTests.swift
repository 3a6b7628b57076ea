import XCTest
@testable import Courier

final class WebSocketResponseHeadParserTests: XCTestCase {
    private let rfcHead = Array(
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n").utf8)

    private func parseWhole(_ bytes: [UInt8]) -> Result<(head: WebSocketResponseHeadParser.Head, remainder: [UInt8])?, CourierError> {
        var parser = WebSocketResponseHeadParser(url: nil)
        do throws(CourierError) {
            return .success(try parser.parse(bytes))
        } catch {
            return .failure(error)
        }
    }

    func testParsesTheRFCAnswerAndKeepsTheFramesThatFollowIt() throws {
        let frame = serverFrame(.text, Array("Hello".utf8))
        let parsed = try XCTUnwrap(parseWhole(rfcHead + frame).get())
        XCTAssertEqual(parsed.head.status, 101)
        XCTAssertEqual(parsed.head.fields.map(\.name), ["Upgrade", "Connection", "Sec-WebSocket-Accept"])
        XCTAssertEqual(parsed.head.fields.last?.value, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        XCTAssertEqual(parsed.remainder, frame)
    }

    func testOneByteAtATimeFindsTheSameHeadAndRemainder() throws {
        let bytes = rfcHead + [0x81, 0x00]
        var parser = WebSocketResponseHeadParser(url: nil)
        var result: (head: WebSocketResponseHeadParser.Head, remainder: [UInt8])?
        var fed = 0
        for byte in bytes where result == nil {
            result = try parser.parse([byte])
            fed += 1
        }
        XCTAssertEqual(fed, rfcHead.count, "the head ends at its blank line")
        XCTAssertEqual(result?.head.status, 101)
        XCTAssertEqual(result?.remainder, [])
    }

    func testBareLineFeedsAndAMissingReasonAreAccepted() throws {
        let parsed = try XCTUnwrap(parseWhole(Array("HTTP/1.0 200\nContent-Length:0\n\nbody".utf8)).get())
        XCTAssertEqual(parsed.head.status, 200)
        XCTAssertEqual(parsed.head.fields, [.init(name: "Content-Length", value: "0")])
        XCTAssertEqual(parsed.remainder, Array("body".utf8))
    }

    func testMalformedHeadsAreInvalidResponses() {
        let heads = [
            "HTTP/2 101 Switching\r\n\r\n", "HTTP/1.1 1O1 OK\r\n\r\n", "ICY 200 OK\r\n\r\n", "HTTP/1.1 101x\r\n\r\n",
            "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\n folded\r\n\r\n", "HTTP/1.1 101 OK\r\nUpgrade : websocket\r\n\r\n",
            "HTTP/1.1 101 OK\r\nno colon here\r\n\r\n", "HTTP/1.1 101 OK\r\n: empty name\r\n\r\n",
            "HTTP/1.1 101 OK\r\nX: a\rb\r\n\r\n", "\r\n\r\n",
        ]
        for head in heads {
            guard case .failure(let error) = parseWhole(Array(head.utf8)) else {
                XCTFail("accepted: \(head.debugDescription)")
                continue
            }
            XCTAssertEqual(error.code, .invalidResponse, head.debugDescription)
        }
    }

    func testAHeadLongerThanTheLimitIsRefusedAsSoonAsItPassesIt() {
        var parser = WebSocketResponseHeadParser(url: nil)
        let line = Array("X-Filler: \(String(repeating: "a", count: 1000))\r\n".utf8)
        var refused: CourierError?
        var sent = Array("HTTP/1.1 101 OK\r\n".utf8).count
        XCTAssertNil(try parser.parse(Array("HTTP/1.1 101 OK\r\n".utf8)))
        while refused == nil, sent < 1 << 20 {
            do throws(CourierError) {
                _ = try parser.parse(line)
                sent += line.count
            } catch {
                refused = error
            }
        }
        XCTAssertEqual(refused?.code, .invalidResponse)
        XCTAssertLessThanOrEqual(sent, WebSocketResponseHeadParser.maximumHeadSize)
    }

    func testAHandshakeFromRequestToFirstMessageWithoutASocket() throws {
        // The pure parts end to end: the request for a URL on a non-default port, a server's 101
        // with its first frame in the same segment, the check, and the reader.
        let handshake = try WebSocketHandshake(
            url: XCTUnwrap(URL(string: "ws://127.0.0.1:9001/echo")), nonce: Array(0..<16), protocols: ["chat"])
        XCTAssertTrue(handshake.head.contains("Host: 127.0.0.1:9001\r\n"))
        let answer =
            Array(
                ("HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nconnection: upgrade\r\nsec-websocket-protocol: chat\r\n"
                    + "sec-websocket-accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\r\n").utf8)
            + serverFrame(.text, Array("welcome".utf8))
        var parser = WebSocketResponseHeadParser(url: handshake.url)
        let parsed = try XCTUnwrap(parser.parse(answer))
        XCTAssertEqual(try handshake.validate(status: parsed.head.status, headers: parsed.head.headers).subprotocol, "chat")
        var reader = WebSocketReader(maximumFrameSize: 1024, maximumMessageSize: 1024)
        XCTAssertEqual(reader.read(parsed.remainder).outputs, [.text("welcome")])
    }
}
