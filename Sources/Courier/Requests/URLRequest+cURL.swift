import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// A `curl` command that reproduces the request, for debugging logs, with what `redaction`
    /// names replaced by its mask (`***`): by default the values of Authorization,
    /// Proxy-Authorization, Cookie and Set-Cookie, the URL's user info (user name and password),
    /// and the values of secret-looking query parameters (``Redaction/defaultQueryParameters``).
    /// Pass ``Redaction/none`` to see everything. Single-quote shell escaping that is safe to
    /// paste. Headers in a stable order.
    ///
    /// One argument per line, joined with ` \` continuations:
    ///
    ///     curl --globoff \
    ///       -X 'POST' \
    ///       -H 'Content-Type: application/json' \
    ///       --data-binary '{"a":1}' \
    ///       'https://example.com/items'
    ///
    /// Every variable part is single-quoted (a `'` inside becomes `'\''`), so nothing is expanded
    /// by a POSIX shell. Header names compare case-insensitively for redaction; headers are
    /// sorted by lower-cased name. A header with an empty value is written `Name;`, curl's way of
    /// sending it empty. `HEAD` uses `--head`. A body that is not UTF-8 text, contains NUL or
    /// starts with `@` (which curl would read as a file name) is piped in with `printf` and
    /// `--data-binary @-`. A body stream is not shown, and a body is never redacted. `--globoff`
    /// keeps curl from treating `[]{}` in the URL as patterns.
    public func cURLDescription(redaction: Redaction = .default) -> String {
        var arguments = ["curl --globoff"]
        let method = httpMethod ?? "GET"
        arguments.append(method == "HEAD" ? "--head" : "-X " + Self.shellQuoted(method))
        for (name, shown) in redaction.headers(allHTTPHeaderFields ?? [:]) {
            arguments.append("-H " + Self.shellQuoted(shown.isEmpty ? "\(name);" : "\(name): \(shown)"))
        }
        var pipedBody: String?
        if let httpBody {
            if let text = String(data: httpBody, encoding: .utf8), !text.contains("\0"), !text.hasPrefix("@") {
                arguments.append("--data-binary " + Self.shellQuoted(text))
            } else {
                pipedBody = Self.printfArgument(httpBody)
                arguments.append("--data-binary @-")
            }
        }
        if let url { arguments.append(Self.shellQuoted(redaction.url(url))) }
        let command = arguments.joined(separator: " \\\n  ")
        return pipedBody.map { "printf \($0) | \(command)" } ?? command
    }

    /// ``cURLDescription(redaction:)`` with the default redaction, also masking the values of
    /// `sensitiveHeaders` (compared case-insensitively). Kept for callers written before
    /// ``Redaction``; it now masks the URL's whole user info and secret query parameters too.
    public func cURLDescription(sensitiveHeaders: Set<String>) -> String {
        cURLDescription(redaction: Redaction.default.adding(headers: sensitiveHeaders))
    }

    /// `text` in single quotes, each `'` closed, escaped and reopened: POSIX shells expand
    /// nothing inside single quotes.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// A quoted `printf` format that prints exactly `data`: printable ASCII as itself, every
    /// other byte (and `\`, `%`, `'`) as a three-digit octal escape, which POSIX printf decodes.
    private static func printfArgument(_ data: Data) -> String {
        var format = ""
        for byte in data {
            if (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "%"), byte != UInt8(ascii: "'") {
                format.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let octal = String(byte, radix: 8)
                format += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return "'" + format + "'"
    }
}
