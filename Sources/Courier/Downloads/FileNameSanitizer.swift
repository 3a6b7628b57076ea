import Foundation

/// Turns a name chosen by a server — a `Content-Disposition` file name or a URL's last path
/// segment — into one safe file name, so a download can never be written outside the directory
/// it was meant for, hidden as a dot file, or disguised with control characters.
public enum FileNameSanitizer {
    /// The limit `suggestedName(for:contentDisposition:fallback:)` uses; well under the 255
    /// bytes most Linux file systems allow, leaving room for a suffix such as " (1)".
    private static let defaultMaxBytes = 200
    /// Used when even the caller's fallback leaves nothing.
    private static let lastResort = "download"

    /// A safe base name: percent-decoded, last component after both "/" and "\", no control
    /// characters (C0, DEL, C1), no leading dots, not "." or "..", trailing dots/spaces trimmed,
    /// at most `maxBytes` UTF-8 bytes (cut on a character boundary, keeping a short extension
    /// like ".tar.gz"/".bin" when possible), `fallback` when nothing usable is left.
    ///
    /// Percent escapes are decoded exactly once, before anything else, so "%2F" is treated as
    /// the "/" it would become; the last *non-empty* component is used, so "reports/" gives
    /// "reports". Leading spaces go with leading dots, and the Unicode direction controls
    /// (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) with the control characters, since they
    /// can make "invoice\u{202E}fdp.exe" display as "invoiceexe.pdf". The fallback passes
    /// through the same rules; if it leaves nothing either, the result is "download". A
    /// `maxBytes` below 1 counts as 1.
    public static func safeName(_ raw: String, maxBytes: Int = 200, fallback: String = "download") -> String {
        let limit = max(1, maxBytes)
        return clean(raw, maxBytes: limit) ?? clean(fallback, maxBytes: limit) ?? String(lastResort.prefix(limit))
    }

    /// The name to save `url` under: from `contentDisposition` if it yields a name, else the URL's
    /// last path segment, else `fallback`. Always passes through safeName.
    ///
    /// A `Content-Disposition` name that sanitizes to nothing (say `filename=".."`) counts as no
    /// name, so the URL gets its turn. The URL's path is taken still percent-encoded, so it is
    /// decoded only once.
    public static func suggestedName(
        for url: URL, contentDisposition: String?, fallback: String = "download"
    ) -> String {
        if let header = contentDisposition,
            let name = ContentDisposition(header)?.fileName,
            let safe = clean(name, maxBytes: defaultMaxBytes)
        {
            return safe
        }
        return safeName(lastPathSegment(of: url), maxBytes: defaultMaxBytes, fallback: fallback)
    }

    /// The URL's own name (its last path segment, made safe), or `nil` when its path gives none
    /// (`https://host/`): what ``suggestedName(for:contentDisposition:fallback:)`` returns before
    /// the response is in, when the name is not a guess. A program can refuse a file already
    /// there before fetching anything; a `Content-Disposition` may still name it otherwise.
    public static func urlName(for url: URL) -> String? {
        clean(lastPathSegment(of: url), maxBytes: defaultMaxBytes)
    }

    /// Decodes `%XX` escapes in `text` to bytes; other characters stay as their UTF-8 bytes.
    ///
    /// When `strict`, a `%` without two hex digits after it, or any non-ASCII character, makes
    /// the result `nil` (RFC 8187 ext-values); otherwise such text is kept as it is.
    static func percentDecodedBytes(_ text: some StringProtocol, strict: Bool) -> [UInt8]? {
        let input = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count,
                let high = Hex.value(of: input[index + 1]), let low = Hex.value(of: input[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
                continue
            }
            if strict && (byte == UInt8(ascii: "%") || byte >= 0x80) { return nil }
            output.append(byte)
            index += 1
        }
        return output
    }

    // MARK: - Steps

    /// The sanitized name, or `nil` when nothing usable is left.
    private static func clean(_ raw: String, maxBytes: Int) -> String? {
        let decodedBytes = percentDecodedBytes(raw, strict: false) ?? Array(raw.utf8)
        // Invalid UTF-8 (possible after decoding) becomes U+FFFD rather than failing.
        let decoded = String(decoding: decodedBytes, as: UTF8.self)
        // Work on scalars, not Characters: "/" followed by a combining mark is one Character
        // that is not equal to "/", but the file system would still see a slash.
        let allowed = decoded.unicodeScalars.filter { !isRemoved($0) }
        let components = allowed.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        guard let last = components.last else { return nil }
        let name = trimmingEdges(String(last), leading: true)
        guard !name.isEmpty else { return nil }
        let result = truncated(name, maxBytes: maxBytes)
        return result.isEmpty ? nil : result
    }

    /// Control characters (C0, DEL, C1) and the direction controls that can reorder how a name
    /// is displayed.
    private static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Dots and white space are trimmed from the end (and, when `leading`, from the start):
    /// a leading dot hides the file or makes it "." / "..", and trailing ones are easy to miss.
    private static func trimmingEdges(_ text: String, leading: Bool) -> String {
        var scalars = text.unicodeScalars[...]
        func isEdge(_ scalar: Unicode.Scalar) -> Bool { scalar == "." || scalar.properties.isWhitespace }
        while leading, let first = scalars.first, isEdge(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, isEdge(last) { scalars = scalars.dropLast() }
        return String(scalars)
    }

    /// `name` cut to at most `maxBytes` UTF-8 bytes, keeping its extension when that leaves
    /// some of the stem.
    private static func truncated(_ name: String, maxBytes: Int) -> String {
        guard name.utf8.count > maxBytes else { return name }
        let scalars = name.unicodeScalars
        if let start = extensionStart(in: scalars) {
            let suffix = String(scalars[start...])
            let room = maxBytes - suffix.utf8.count
            if room > 0 {
                let stem = trimmingEdges(prefix(of: String(scalars[..<start]), maxBytes: room), leading: false)
                if !stem.isEmpty { return stem + suffix }
            }
        }
        return trimmingEdges(prefix(of: name, maxBytes: maxBytes), leading: false)
    }

    /// Where a short extension starts: a final ".xxx" of 1–8 ASCII letters or digits, together
    /// with one ".yyy" of 1–3 before it (".tar.gz"), as long as something comes before it.
    private static func extensionStart(in scalars: String.UnicodeScalarView) -> String.Index? {
        func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9": return true
            default: return false
            }
        }
        func isShortSegment(_ segment: Substring.UnicodeScalarView, maxLength: Int) -> Bool {
            (1...maxLength).contains(segment.count) && segment.allSatisfy(isLetterOrDigit)
        }
        guard let lastDot = scalars.lastIndex(of: "."),
            isShortSegment(scalars[scalars.index(after: lastDot)...], maxLength: 8),
            lastDot > scalars.startIndex
        else { return nil }
        let before = scalars[..<lastDot]
        if let innerDot = before.lastIndex(of: "."), innerDot > scalars.startIndex,
            isShortSegment(before[before.index(after: innerDot)...], maxLength: 3)
        {
            return innerDot
        }
        return lastDot
    }

    /// The longest prefix of `text` within `maxBytes` UTF-8 bytes that ends on a Character
    /// boundary; on a scalar boundary if the first Character alone is too long (a base letter
    /// with hundreds of combining marks is one Character). A scalar is never split.
    private static func prefix(of text: String, maxBytes: Int) -> String {
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            result.append(character)
            used += size
        }
        guard result.isEmpty else { return result }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > maxBytes { break }
            scalars.append(scalar)
            used += size
        }
        return String(scalars)
    }

    /// The URL's last non-empty path segment, still percent-encoded.
    private static func lastPathSegment(of url: URL) -> String {
        let path: String
        if let components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
            path = components.percentEncodedPath
        } else {
            // Already decoded: escape "%" so the decoding in safeName leaves it as it is.
            path = url.path.replacingOccurrences(of: "%", with: "%25")
        }
        return path.split(separator: "/").last.map(String.init) ?? ""
    }
}
