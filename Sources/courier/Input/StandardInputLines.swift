import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// `courier ws`'s stdin: its lines are sent by the library (``WebSocketTask/sendLines(from:binary:)``);
/// here, a line that cannot be sent in the command's words.
enum StandardInputLines {
    /// Why a line cannot be sent.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// Line `number`'s bytes as a message (``WebSocketTask/message(line:binary:)``), or why not. Pure.
    static func message(_ bytes: ArraySlice<UInt8>, number: Int, binary: Bool) -> Result<URLSessionWebSocketTask.Message, Refusal> {
        guard let message = WebSocketTask.message(line: bytes, binary: binary) else {
            return .failure(Refusal(reason: refusal(.notUTF8(line: number), limit: 0) ?? ""))
        }
        return .success(message)
    }

    /// The line on stderr for a refused line (`limit`: `--max-message`); `nil` for other endings.
    static func refusal(_ ending: WebSocketTask.LinesEnding, limit: Int) -> String? {
        switch ending {
        case .notUTF8(let line): "line \(line) of stdin is not UTF-8, which a text message must be (--binary sends bytes)"
        case .tooLong(let line): "line \(line) of stdin is longer than --max-message (\(limit) bytes)"
        case .inputEnded, .taskEnded: nil
        }
    }
}
