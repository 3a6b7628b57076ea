import Foundation

/// A strict multipart/form-data parser for checking what the encoder writes, written from
/// RFC 2046 §5.1.1 independently of the encoder: no preamble or epilogue, CRLF line ends only,
/// and every delimiter exactly where the grammar puts it.
struct MultipartParser {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One parsed part.
    struct Part: Equatable {
        /// Header fields in order, as (name, value).
        var headers: [Header]
        var body: Data

        struct Header: Equatable {
            let name: String
            let value: String
        }

        /// The value of the first header called `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// A `Content-Disposition` parameter's raw quoted value, without the quotes.
        func dispositionParameter(_ parameter: String) -> String? {
            guard let disposition = header("Content-Disposition") else { return nil }
            for piece in disposition.components(separatedBy: "; ").dropFirst() {
                let prefix = parameter + "=\""
                if piece.hasPrefix(prefix), piece.hasSuffix("\"") {
                    return String(piece.dropFirst(prefix.count).dropLast())
                }
            }
            return nil
        }
    }

    static func parse(_ body: Data, boundary: String) throws -> [Part] {
        let dashBoundary = Data("--\(boundary)".utf8)
        let delimiter = Data("\r\n--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        let close = Data("--\r\n".utf8)
        guard body.starts(with: dashBoundary) else { throw Failure(description: "the body does not start with --boundary") }
        var cursor = body.startIndex + dashBoundary.count
        var parts: [Part] = []
        while true {
            if body[cursor...].starts(with: close) {
                guard cursor + close.count == body.endIndex else {
                    throw Failure(description: "bytes after the closing delimiter")
                }
                return parts
            }
            guard body[cursor...].starts(with: crlf) else {
                throw Failure(description: "a delimiter is not followed by CRLF or --CRLF")
            }
            cursor += crlf.count
            guard let end = body.range(of: delimiter, in: cursor..<body.endIndex) else {
                throw Failure(description: "a part is not closed by a delimiter")
            }
            parts.append(try parsePart(body[cursor..<end.lowerBound]))
            cursor = end.upperBound
        }
    }

    private static func parsePart(_ bytes: Data) throws -> Part {
        let blankLine = Data("\r\n\r\n".utf8)
        let headerEnd: Range<Data.Index>
        if bytes.starts(with: Data("\r\n".utf8)) {
            headerEnd = bytes.startIndex..<bytes.startIndex + 2  // no headers at all
        } else if let found = bytes.range(of: blankLine) {
            headerEnd = found
        } else {
            throw Failure(description: "a part has no blank line after its headers")
        }
        guard let text = String(data: bytes[bytes.startIndex..<headerEnd.lowerBound], encoding: .utf8) else {
            throw Failure(description: "part headers are not UTF-8")
        }
        var headers: [Part.Header] = []
        for line in text.components(separatedBy: "\r\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), line[line.index(after: colon)...].hasPrefix(" ") else {
                throw Failure(description: "malformed header line \(line.debugDescription)")
            }
            headers.append(.init(name: String(line[..<colon]), value: String(line[line.index(colon, offsetBy: 2)...])))
        }
        return Part(headers: headers, body: Data(bytes[headerEnd.upperBound...]))
    }
}
