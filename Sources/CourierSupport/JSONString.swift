/// A string written as a JSON string (RFC 8259 §7), for the test server's JSON, `courier events
/// --json` and the benchmarks: quote, backslash and control characters escaped, everything else
/// as is (UTF-8 on output).
package enum JSONString {
    /// `text` between quotes, escaped.
    package static func quoted(_ text: String) -> String {
        var out = ""
        append(text, to: &out)
        return out
    }

    /// Appends `text` between quotes, escaped, to `out`.
    package static func append(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
