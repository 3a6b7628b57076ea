import Foundation
import CourierSupport

/// How a request body is delimited.
enum BodyFraming: Equatable {
    case none
    case contentLength(Int)
    case chunked
}

/// A request the server refuses, with the status to answer (the connection is then closed).
struct RequestError: Error, Equatable {
    let status: Int
    let reason: String
}

/// Parses request heads strictly. Hostile input yields a ``RequestError``, never a trap:
/// every index is bounds-checked and every length is parsed with overflow checks.
enum HTTPRequestParser {
    /// Parses a head: request line, header lines, each ending in CRLF, then an empty line.
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws(RequestError) -> RequestHead {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == cr {
                guard index + 1 < bytes.endIndex, bytes[index + 1] == lf else { throw bad("bare CR") }
                lines.append(bytes[lineStart..<index])
                index += 2
                lineStart = index
            } else if byte == lf {
                throw bad("bare LF")
            } else {
                index += 1
            }
        }
        guard lineStart == bytes.endIndex, lines.count >= 2, lines.last?.isEmpty == true else {
            throw bad("incomplete head")
        }
        let (method, target, major, minor) = try parseRequestLine(lines[0])
        var headers: [(name: String, value: String)] = []
        for line in lines[1..<(lines.count - 1)] {
            headers.append(try parseHeaderLine(line))
        }
        return RequestHead(method: method, target: target, versionMajor: major, versionMinor: minor, headers: headers)
    }

    /// Works out how the body is framed. `Transfer-Encoding` must be exactly `chunked`;
    /// both framings at once, or conflicting/invalid `Content-Length` values, are refused.
    static func framing(of head: RequestHead) throws(RequestError) -> BodyFraming {
        let encodings = head.headerValues("Transfer-Encoding")
        let lengths = head.headerValues("Content-Length")
        if !encodings.isEmpty {
            guard lengths.isEmpty else { throw bad("both Transfer-Encoding and Content-Length") }
            let codings = encodings.flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard codings == ["chunked"] else {
                throw RequestError(status: 501, reason: "unsupported transfer coding")
            }
            return .chunked
        }
        guard let first = lengths.first else { return .none }
        guard lengths.allSatisfy({ $0 == first }), let length = parseDecimal(first) else {
            throw bad("invalid Content-Length")
        }
        return length == 0 ? .none : .contentLength(length)
    }

    /// Parses a non-empty string of ASCII digits; `nil` for signs, spaces, or overflow.
    static func parseDecimal(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 19 else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// Parses the hexadecimal size at the start of a chunk-size line (extensions after `;` are
    /// ignored); `nil` if malformed or larger than `Int.max`.
    static func parseChunkSize(_ line: ArraySlice<UInt8>) -> Int? {
        var value = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = QueryString.hexValue(line[index]) {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 16)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        while index < line.endIndex, line[index] == sp || line[index] == tab { index += 1 }
        guard index == line.endIndex || line[index] == UInt8(ascii: ";") else { return nil }
        return value
    }

    // MARK: - Pieces

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let sp = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    private static func bad(_ reason: String) -> RequestError {
        RequestError(status: 400, reason: reason)
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(RequestError) -> (String, String, Int, Int) {
        let parts = line.split(separator: sp, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw bad("malformed request line") }
        let method = parts[0], target = parts[1], version = parts[2]
        guard !method.isEmpty, method.allSatisfy(HTTPToken.isCharacter) else { throw bad("malformed method") }
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw bad("malformed target") }
        let versionBytes = Array(version)
        guard versionBytes.count == 8, versionBytes[0..<5].elementsEqual("HTTP/".utf8), versionBytes[6] == UInt8(ascii: "."),
            let major = digit(versionBytes[5]), let minor = digit(versionBytes[7])
        else {
            throw bad("malformed version")
        }
        guard major == 1 else { throw RequestError(status: 505, reason: "unsupported HTTP version") }
        let targetString = String(decoding: target, as: UTF8.self)
        guard targetString.hasPrefix("/") || targetString == "*" || targetString.contains("://") else {
            throw bad("unsupported target form")
        }
        return (String(decoding: method, as: UTF8.self), targetString, major, minor)
    }

    private static func parseHeaderLine(_ line: ArraySlice<UInt8>) throws(RequestError) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw bad("header without colon") }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(HTTPToken.isCharacter) else { throw bad("malformed header name") }
        var value = line[(colon + 1)...]
        while let first = value.first, first == sp || first == tab { value = value.dropFirst() }
        while let last = value.last, last == sp || last == tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }) else { throw bad("control character in header") }
        return (String(decoding: name, as: UTF8.self), decodeFieldValue(value))
    }

    /// Field values are UTF-8 when valid; otherwise each byte is taken as Latin-1, so nothing is lost.
    private static func decodeFieldValue(_ bytes: ArraySlice<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func digit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }
}
