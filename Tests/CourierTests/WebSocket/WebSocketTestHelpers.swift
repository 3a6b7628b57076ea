import Foundation
import XCTest
@testable import Courier

/// The key RFC 6455 §5.7's masked examples use.
let rfcMaskingKey = WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D)

/// A raw frame header written by hand, for the frames Courier's encoder refuses to make.
func rawHeader(_ first: UInt8, _ second: UInt8, _ rest: [UInt8] = []) -> [UInt8] { [first, second] + rest }

/// Runs `body` and returns the ``WebSocketProtocolError`` it throws, failing the test when it
/// throws none.
func protocolError<T>(
    _ body: () throws(WebSocketProtocolError) -> T, file: StaticString = #filePath, line: UInt = #line
) -> WebSocketProtocolError? {
    do {
        _ = try body()
        XCTFail("expected a WebSocket protocol error", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

/// Runs `body` and returns the ``CourierError`` it throws, failing the test when it throws none.
func courierError<T>(
    _ body: () throws(CourierError) -> T, file: StaticString = #filePath, line: UInt = #line
) -> CourierError? {
    do {
        _ = try body()
        XCTFail("expected a CourierError", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

extension WebSocketReader {
    /// Reads `bytes` in chunks of `size`, gathering every output until the first failure.
    mutating func read(_ bytes: [UInt8], chunkSize size: Int) -> Result {
        var total = Result()
        var start = 0
        while start < bytes.count {
            let piece = read(Array(bytes[start..<min(start + size, bytes.count)]))
            total.outputs += piece.outputs
            if let failure = piece.failure {
                total.failure = failure
                return total
            }
            start += size
        }
        return total
    }
}

/// A server's (unmasked) frame as bytes.
func serverFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    do {
        return try [UInt8](WebSocketFrame(fin: fin, opcode: opcode, payload: Data(payload)).encoded(maskingKey: nil))
    } catch {
        XCTFail("cannot encode: \(error)")
        return []
    }
}
