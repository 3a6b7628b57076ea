import Courier
import Foundation

/// What the store may show of a libpq connection string, and the secrets it must never show.
///
/// libpq takes two forms: a URI (`postgres://user:secret@host/db?sslmode=require`) and
/// keyword/value pairs (`host=/run/pg user=app password='se cret' dbname=jobs`). The password can
/// sit in the URI's user info, in a `password` parameter of either form, or nowhere (then libpq
/// reads `PGPASSWORD` or `~/.pgpass` itself, and the store never sees it).
enum PostgresConnectionString {
    /// The connection string with every password masked: a URI through ``Redaction/default``
    /// (user info and the `password` parameter), keyword/value pairs with `password=***`.
    static func redacted(_ text: String) -> String {
        if isURI(text) { return Redaction.default.redactingURLs(in: text) }
        var output = ""
        for (keyword, _, raw) in pairs(in: text) {
            if !output.isEmpty { output += " " }
            output += keyword.lowercased() == "password" ? "\(keyword)=***" : raw
        }
        return output
    }

    /// The passwords written in the connection string (in both their written and decoded forms),
    /// to be removed from any text that might echo them.
    static func secrets(in text: String) -> [String] {
        var found: [String] = []
        if isURI(text) {
            if let schemeEnd = text.range(of: "://") {
                let rest = text[schemeEnd.upperBound...]
                let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex)]
                if let at = authority.lastIndex(of: "@") {
                    let userInfo = authority[..<at]
                    if let colon = userInfo.firstIndex(of: ":") {
                        found.append(String(userInfo[userInfo.index(after: colon)...]))
                    }
                }
            }
            if let query = text.split(separator: "?", maxSplits: 1).dropFirst().first {
                for piece in query.split(separator: "&") {
                    let parts = piece.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "password" { found.append(String(parts[1])) }
                }
            }
        } else {
            for (keyword, value, _) in pairs(in: text) where keyword.lowercased() == "password" { found.append(value) }
        }
        let decoded = found.compactMap { $0.removingPercentEncoding }
        return Array(Set((found + decoded).filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }

    /// `text` with each of `secrets` replaced by `***`, and any connection string in it redacted.
    static func scrub(_ text: String, secrets: [String]) -> String {
        var text = text
        for secret in secrets { text = text.replacingOccurrences(of: secret, with: "***") }
        return Redaction.default.redactingURLs(in: text)
    }

    private static func isURI(_ text: String) -> Bool {
        let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// The keyword/value pairs as libpq reads them: `keyword = value`, a value either bare (to the
    /// next white space) or single-quoted with `\'` and `\\` escapes. Returns each pair's keyword,
    /// value and the text it was written as.
    static func pairs(in text: String) -> [(keyword: String, value: String, raw: String)] {
        var result: [(String, String, String)] = []
        var index = text.startIndex
        func skipSpaces() { while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) } }
        while true {
            skipSpaces()
            guard index < text.endIndex else { break }
            let start = index
            while index < text.endIndex, text[index] != "=", !text[index].isWhitespace { index = text.index(after: index) }
            let keyword = String(text[start..<index])
            skipSpaces()
            guard index < text.endIndex, text[index] == "=" else {
                // Not a pair libpq would accept; keep the word as written (it holds no known secret).
                result.append((keyword, "", keyword))
                continue
            }
            index = text.index(after: index)
            skipSpaces()
            var value = ""
            if index < text.endIndex, text[index] == "'" {
                index = text.index(after: index)
                while index < text.endIndex, text[index] != "'" {
                    if text[index] == "\\", text.index(after: index) < text.endIndex { index = text.index(after: index) }
                    value.append(text[index])
                    index = text.index(after: index)
                }
                if index < text.endIndex { index = text.index(after: index) }
            } else {
                while index < text.endIndex, !text[index].isWhitespace {
                    if text[index] == "\\", text.index(after: index) < text.endIndex { index = text.index(after: index) }
                    value.append(text[index])
                    index = text.index(after: index)
                }
            }
            result.append((keyword, value, String(text[start..<index])))
        }
        return result
    }
}
