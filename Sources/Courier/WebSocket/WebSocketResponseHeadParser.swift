internal import CourierSupport
import Foundation

/// Reads the HTTP/1.1 response head that answers the opening handshake from the bytes of a
/// plain socket (RFC 9112 §4–5), fed in chunks of any size, and hands back the bytes after it:
/// a server may send its first frames in the same segment as its 101.
///
/// Strict where leniency would be a risk and lenient where RFC 9112 allows it: a bare LF ends a
/// line (§2.2), but a folded line, a header name that is not a token, a status that is not three
/// digits or a version other than HTTP/1.x are refused. The head may be at most
/// ``maximumHeadSize`` bytes: memory stays bounded whatever the server sends.
struct WebSocketResponseHeadParser: Sendable {
    /// A parsed response head.
    struct Head: Sendable, Equatable {
        /// The status code.
        var status: Int
        /// The fields in the order received, names as sent.
        var fields: [Field]

        /// The fields as the ``WebSocketHandshake/validate(status:headers:)`` list.
        var headers: [(name: String, value: String)] { fields.map { ($0.name, $0.value) } }
    }

    /// One header field.
    struct Field: Sendable, Equatable {
        /// The name as sent.
        var name: String
        /// The value, without the whitespace around it.
        var value: String
    }

    /// The largest head accepted, from the status line to the blank line.
    static let maximumHeadSize = 16 * 1024

    /// The URL the handshake is for, for the errors' context.
    let url: URL?
    /// The head's bytes so far (never more than ``maximumHeadSize``).
    private var buffer: [UInt8] = []
    /// Where to resume looking for the blank line.
    private var scanned = 0

    /// A parser for the answer to a handshake for `url`.
    init(url: URL?) {
        self.url = url
    }

    /// Takes the next chunk. Returns `nil` while the head is incomplete; once it is, the head
    /// and the bytes of `bytes` that follow it (the first frames, if any).
    ///
    /// Throws ``CourierError/Code-swift.struct/invalidResponse`` for a head that is malformed or
    /// longer than ``maximumHeadSize``.
    mutating func parse(_ bytes: some Collection<UInt8>) throws(CourierError) -> (head: Head, remainder: [UInt8])? {
        let before = buffer.count
        // Only what the limit allows is kept; the rest of the chunk waits in `bytes`.
        buffer.append(contentsOf: bytes.prefix(Self.maximumHeadSize + 1 - before))
        guard let end = findEnd() else {
            if buffer.count > Self.maximumHeadSize {
                throw refuse("the response head is longer than \(Self.maximumHeadSize) bytes")
            }
            return nil
        }
        let head = try parseHead(buffer[..<end])
        let usedFromChunk = end - before
        return (head, Array(bytes.dropFirst(usedFromChunk)))
    }

    /// The index just past the blank line (`\r\n\r\n` or `\n\n`, or a mix), if it has arrived.
    private mutating func findEnd() -> Int? {
        var index = max(scanned, 0)
        while index < buffer.count {
            if buffer[index] == 0x0A {
                // A line feed ends an empty line when the line it ends has nothing but an optional CR.
                if index >= 1, buffer[index - 1] == 0x0A { return index + 1 }
                if index >= 2, buffer[index - 1] == 0x0D, buffer[index - 2] == 0x0A { return index + 1 }
            }
            index += 1
        }
        scanned = buffer.count
        return nil
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>) throws(CourierError) -> Head {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        for index in bytes.indices where bytes[index] == 0x0A {
            var end = index
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            lines.append(bytes[start..<end])
            start = index + 1
        }
        // The last line is the empty one that ends the head.
        guard lines.count >= 2, let statusLine = lines.first else { throw refuse("the response head is empty") }
        let status = try parseStatusLine(statusLine)
        var fields: [Field] = []
        for line in lines.dropFirst().dropLast() {
            fields.append(try parseField(line))
        }
        return Head(status: status, fields: fields)
    }

    /// `HTTP/1.x SP 3DIGIT SP reason` (the reason may be empty, and the space before it missing).
    private func parseStatusLine(_ line: ArraySlice<UInt8>) throws(CourierError) -> Int {
        let text = Array(line)
        let prefix = Array("HTTP/1.".utf8)
        guard text.count >= 12, Array(text[0..<7]) == prefix, text[7] >= 0x30, text[7] <= 0x39, text[8] == 0x20,
            text[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), text.count == 12 || text[12] == 0x20
        else {
            throw refuse("the status line is not HTTP/1.x: \(Self.printable(line))")
        }
        return text[9...11].reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `name ":" OWS value OWS`.
    private func parseField(_ line: ArraySlice<UInt8>) throws(CourierError) -> Field {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw refuse("a header line has no colon: \(Self.printable(line))")
        }
        let name = line[line.startIndex..<colon]
        // An empty name, whitespace before the colon (§5.1) or a folded line (§5.2) are refused.
        guard !name.isEmpty, name.allSatisfy(HTTPToken.isCharacter) else {
            throw refuse("a header name is not a token: \(Self.printable(line))")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard !value.contains(where: { $0 == 0x0D || $0 == 0x00 }) else {
            throw refuse("the value of \(String(decoding: name, as: UTF8.self)) holds a CR or NUL")
        }
        return Field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
    }

    private func refuse(_ message: String) -> CourierError {
        CourierError(code: .invalidResponse, message: "the WebSocket handshake's answer is not HTTP: " + message, url: url)
    }

    /// At most 80 bytes of `line`, control characters escaped, for an error message.
    private static func printable(_ line: ArraySlice<UInt8>) -> String {
        String(decoding: line.prefix(80), as: UTF8.self).unicodeScalars
            .map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }
}
