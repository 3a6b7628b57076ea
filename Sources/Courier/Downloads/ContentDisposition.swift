import Foundation
internal import CourierSupport

/// A parsed `Content-Disposition` response header (RFC 6266): a disposition type and its
/// parameters, read leniently and without ever trapping, whatever the server sends.
///
/// `attachment; filename="report.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf` gives the type
/// `attachment` and both parameters, and `fileName` prefers the `filename*` one. The name is
/// the server's: pass it through `FileNameSanitizer` before using it as a path.
struct ContentDisposition: Sendable, Equatable {
    /// The disposition type, lower-cased, e.g. "attachment" or "inline".
    let type: String
    /// The parameters by lower-cased name. Quoted values are unquoted with their backslash
    /// escapes removed; values of names ending in "*" (RFC 8187 ext-values such as `filename*`)
    /// are decoded, and left out when they cannot be. When a name repeats, the first one counts.
    let parameters: [String: String]

    /// Parses `header`; returns `nil` when it does not start with a disposition type.
    ///
    /// Beyond that the parse is forgiving, as browsers are: an unquoted value runs to the next
    /// ";" (so `filename=my report.pdf` works), an unterminated quoted string runs to the end,
    /// and a parameter without "=" or a valid name is skipped.
    init?(_ header: String) {
        var cursor = Cursor(header)
        cursor.skipWhitespace()
        let type = cursor.read(while: HTTPToken.isCharacter)
        guard !type.isEmpty else { return nil }
        cursor.skipToSeparator()

        var parameters: [String: String] = [:]
        while cursor.consume(";") {
            cursor.skipWhitespace()
            let name = cursor.read(while: HTTPToken.isCharacter).lowercased()
            cursor.skipWhitespace()
            guard !name.isEmpty, cursor.consume("=") else {
                cursor.skipToSeparator()
                continue
            }
            cursor.skipWhitespace()
            let raw: String
            if cursor.consume("\"") {
                raw = cursor.readQuotedStringBody()
                cursor.skipToSeparator()
            } else {
                raw = cursor.read(while: { $0 != ";" }).trimmingCharacters(in: .whitespaces)
            }
            let value = name.hasSuffix("*") ? Self.decodeExtendedValue(raw) : raw
            if let value, parameters[name] == nil { parameters[name] = value }
        }
        self.type = type.lowercased()
        self.parameters = parameters
    }

    /// `filename*` (RFC 8187 ext-value: charset'lang'percent-encoded; UTF-8 and ISO-8859-1
    /// supported) wins over `filename`.
    ///
    /// Empty values count as missing. The result is unsanitized: it may contain "/" or "..".
    var fileName: String? {
        for key in ["filename*", "filename"] {
            if let value = parameters[key], !value.isEmpty { return value }
        }
        return nil
    }

    /// Decodes an RFC 8187 ext-value, `charset'language'value-chars`: the charset is UTF-8 or
    /// ISO-8859-1 (any case), the language is ignored, and the value is percent-encoded bytes.
    /// Returns `nil` for any other charset, a malformed escape, raw non-ASCII, or invalid UTF-8.
    private static func decodeExtendedValue(_ text: String) -> String? {
        let parts = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3,
            let bytes = FileNameSanitizer.percentDecodedBytes(parts[2], strict: true)
        else { return nil }
        switch parts[0].trimmingCharacters(in: .whitespaces).lowercased() {
        case "utf-8":
            return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1":
            // ISO-8859-1 byte values are exactly the code points U+0000–U+00FF.
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return String(scalars)
        default:
            return nil
        }
    }
}

extension ContentDisposition {
    /// Reads a header one Unicode scalar at a time. Every read goes through `peek()`, which checks
    /// the bounds, so no input can move it past the end.
    private struct Cursor {
        private let scalars: [Unicode.Scalar]
        private var position = 0

        init(_ text: String) {
            scalars = Array(text.unicodeScalars)
        }

        func peek() -> Unicode.Scalar? {
            position < scalars.count ? scalars[position] : nil
        }

        /// Moves past `scalar` if it is next; reports whether it was.
        mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
            guard peek() == scalar else { return false }
            position += 1
            return true
        }

        /// Reads scalars while `predicate` holds.
        mutating func read(while predicate: (Unicode.Scalar) -> Bool) -> String {
            var result = String.UnicodeScalarView()
            while let next = peek(), predicate(next) {
                result.append(next)
                position += 1
            }
            return String(result)
        }

        /// Spaces and tabs (RFC 9110 OWS).
        mutating func skipWhitespace() {
            while let next = peek(), next == " " || next == "\t" { position += 1 }
        }

        /// The rest of a quoted string whose opening quote was just consumed, up to and past the
        /// closing quote, with backslash escapes resolved. Runs to the end if the quote is never
        /// closed, and drops a backslash that ends the input.
        mutating func readQuotedStringBody() -> String {
            var result = String.UnicodeScalarView()
            while let next = peek() {
                position += 1
                if next == "\"" { break }
                if next == "\\" {
                    guard let escaped = peek() else { break }
                    position += 1
                    result.append(escaped)
                } else {
                    result.append(next)
                }
            }
            return String(result)
        }

        /// Skips anything up to the next ";" that is not inside a quoted string (so junk after a
        /// value cannot hide a separator in quotes), leaving the ";" to be consumed.
        mutating func skipToSeparator() {
            while let next = peek(), next != ";" {
                position += 1
                if next == "\"" { _ = readQuotedStringBody() }
            }
        }
    }
}
