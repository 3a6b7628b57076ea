import Foundation
internal import CourierSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

extension WebSocketTask {
    /// Why ``sendLines(from:binary:)`` stopped.
    public enum LinesEnding: Equatable, Sendable {
        /// The input ended (or could not be read further) and every line of it was sent.
        case inputEnded
        /// Line `line` (1-based) was not sent: a text message must be UTF-8 and its bytes are not.
        case notUTF8(line: Int)
        /// Line `line` (1-based) was not sent: it is longer than ``WebSocketTask/maximumMessageSize``.
        /// Said as soon as that many bytes came without a line end.
        case tooLong(line: Int)
        /// The task failed or is closing, so no more can be sent; the task's own error says why.
        case taskEnded
    }

    /// Sends each line read from `descriptor` as one message — text, or with `binary` its bytes —
    /// until the input ends, a line cannot be sent, or a line finds the task ended; returns which.
    /// (A task that ends while the input stays silent is noticed at the next line.) Lines end
    /// with `\n` (a `\r` before it is dropped; the last line may lack it) and the line end is not
    /// sent. Each line is read only once the one before is queued (``send(_:)``), so a peer that
    /// reads slowly holds the reading back rather than letting lines pile up in memory.
    ///
    /// `descriptor` (a pipe, stdin, a file) is read on a thread of its own, since a read blocks and
    /// a pipe may stay open for hours; it is not closed. Neither is the task: what the end of the
    /// input means (a close with 1000, more to send) is the caller's to decide.
    public func sendLines(from descriptor: Int32, binary: Bool = false) async -> LinesEnding {
        let limit = maximumMessageSize
        return await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                continuation.resume(
                    returning: Self.readLines(from: descriptor, limit: limit) { line in
                        guard let message = Self.message(line: line.bytes, binary: binary) else { return .notUTF8(line: line.number) }
                        return sendBlocking(message) ? nil : .taskEnded
                    })
            }
            thread.name = "Courier WebSocket lines"
            thread.start()
        }
    }

    /// Line `bytes` as a message: binary as they are, text when they are UTF-8 (`nil` when not).
    public static func message(line bytes: ArraySlice<UInt8>, binary: Bool) -> URLSessionWebSocketTask.Message? {
        if binary { return .data(Data(bytes)) }
        return String(validating: bytes, as: UTF8.self).map { .string($0) }
    }

    /// ``send(_:)`` from a thread that may block: whether the message was queued.
    private func sendBlocking(_ message: URLSessionWebSocketTask.Message) -> Bool {
        let queued = Locked(false)
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(CourierError) {
                try await send(message)
                queued.set(true)
            } catch {}
            done.signal()
        }
        done.wait()
        return queued.current
    }

    /// Reads `descriptor` to its end, cutting lines of at most `limit` bytes and handing each to
    /// `handle`, which returns why to stop, or `nil` to go on.
    static func readLines(
        from descriptor: Int32, limit: Int, handle: (InputLineBuffer.Line) -> LinesEnding?
    ) -> LinesEnding {
        var lines = InputLineBuffer(lineLimit: limit)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var atEnd = false
        while true {
            do throws(InputLineBuffer.LineTooLong) {
                while let line = try lines.next(atEnd: atEnd) {
                    if let ending = handle(line) { return ending }
                }
            } catch {
                return .tooLong(line: error.line)
            }
            if atEnd { return .inputEnded }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
            } else {
                lines.append(chunk[0..<count])
            }
        }
    }
}
