import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier

/// `courier ws`'s stdin: lines cut as they arrive (``InputLineBuffer``: `\n` ends a line, a `\r`
/// before it is dropped, the last line may lack it), each made a message, on a thread of its own
/// (a read of stdin blocks, and a pipe may stay open for hours).
enum StandardInputLines {
    /// What stdin gives next.
    enum Next {
        /// A line, as the message to send.
        case message(URLSessionWebSocketTask.Message)
        /// The end of stdin (or a read error: nothing more will come).
        case end
        /// A line that cannot be sent as asked; reading stops.
        case refused(String)
    }

    /// Reads stdin until its end on a new thread, calling `handle` with each line as a message
    /// (text, or binary with `binary`) and then `.end` or `.refused`; `handle` returns whether to
    /// stop. A line over `limit` bytes is refused as soon as that many bytes came without a newline.
    static func start(limit: Int, binary: Bool, handle: @escaping @Sendable (Next) -> Bool) {
        let thread = Thread {
            var lines = InputLineBuffer(lineLimit: limit)
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            var atEnd = false
            while true {
                do throws(InputLineBuffer.LineTooLong) {
                    while let line = try lines.next(atEnd: atEnd) {
                        switch message(line.bytes, number: line.number, binary: binary) {
                        case .success(let message): if handle(.message(message)) { return }
                        case .failure(let refusal):
                            _ = handle(.refused(refusal.reason))
                            return
                        }
                    }
                } catch {
                    _ = handle(.refused("line \(error.line) of stdin is longer than --max-message (\(limit) bytes)"))
                    return
                }
                if atEnd {
                    _ = handle(.end)
                    return
                }
                let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    atEnd = true
                } else {
                    lines.append(chunk[0..<count])
                }
            }
        }
        thread.name = "courier ws stdin"
        thread.start()
    }

    /// Why a line cannot be sent.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// Line `number`'s bytes as a message: binary as they are, text when they are UTF-8. Pure.
    static func message(_ bytes: ArraySlice<UInt8>, number: Int, binary: Bool) -> Result<URLSessionWebSocketTask.Message, Refusal> {
        if binary { return .success(.data(Data(bytes))) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(Refusal(reason: "line \(number) of stdin is not UTF-8, which a text message must be (--binary sends bytes)"))
        }
        return .success(.string(text))
    }
}
