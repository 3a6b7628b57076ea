/// Helpers for request targets: splitting off the query and decoding it.
enum RequestTarget {
    /// Splits a request target into path and (undecoded) query. An absolute-form target
    /// (`http://host/path`) is reduced to its path.
    static func split(_ target: String) -> (path: String, query: String?) {
        var rest = Substring(target)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        if let scheme = rest.range(of: "://"), !rest[..<scheme.lowerBound].contains("/") {
            let afterAuthority = rest[scheme.upperBound...]
            rest = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }).map { afterAuthority[$0...] } ?? "/"
            if rest.first == "?" { rest = "/" + rest }
        }
        guard let mark = rest.firstIndex(of: "?") else { return (String(rest), nil) }
        return (String(rest[..<mark]), String(rest[rest.index(after: mark)...]))
    }
}

/// `application/x-www-form-urlencoded` style decoding, used for queries and form bodies.
enum QueryString {
    /// Parses `a=1&b=x+y` into ordered, decoded pairs. A name without `=` gets an empty value.
    static func parse(_ query: String) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                return (percentDecode(item[..<equals]), percentDecode(item[item.index(after: equals)...]))
            }
            return (percentDecode(item), "")
        }
    }

    /// Collapses pairs into a dictionary where the last value for a name wins.
    static func lastWins(_ pairs: [(name: String, value: String)]) -> [String: String] {
        var result: [String: String] = [:]
        for pair in pairs { result[pair.name] = pair.value }
        return result
    }

    /// Decodes `%XX` escapes (a malformed escape is kept literally) and, when `plusAsSpace`,
    /// `+` as a space. Invalid UTF-8 is replaced rather than rejected.
    static func percentDecode(_ text: Substring, plusAsSpace: Bool = true) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
