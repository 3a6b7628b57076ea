import Foundation

/// Which value of a response proves that the bytes of a later `Range` answer belong to the same
/// version (RFC 9110 §8.8 and §13.1.5), decided here once for every kind of task.
///
/// - A strong ETag, preferably. RFC 9110 wants it quoted (`"v1"`); httpbin and some real
///   servers send it bare (`ETag: v1`). A bare tag that could be a quoted tag's inside (visible
///   ASCII, no space, no `"`) is kept, and goes back in `If-Range` exactly as the server sent it:
///   a server that compares strings matches it, one that compares parsed tags strips quotes
///   alike, and a strict one that cannot parse it answers 200 with the whole body, which starts
///   the file over. Nothing is appended unless the 206 carries that same tag
///   (``RangeContinuation``), so a bare tag can cost a restart, never a mixed file.
/// - A weak ETag (`W/…`) never: it does not promise the same bytes.
/// - Otherwise `Last-Modified`, for one stream only: never for a split download
///   (``bindsSegments(_:)``).
/// - Nothing for a content-encoded body: its bytes are the decoded ones, which no range addresses.
enum StrongValidator {
    /// The validator to keep for `If-Range`, from a response's headers; `nil` when there is none.
    /// `lastModified` is read only when no strong tag decides (each header read searches them all).
    /// Runs for every response head, so it reads bytes and never goes through `NSString`.
    static func of(etag: String?, lastModified: @autoclosure () -> String?, contentEncoding: String?) -> String? {
        guard contentEncoding == nil else { return nil }
        if let etag, let tag = strongEntityTag(etag) { return tag }
        return lastModified()
    }

    /// Whether a kept validator is an entity tag rather than a date: an HTTP date always holds
    /// a space, and an entity tag (quoted or bare) never does.
    static func isEntityTag(_ validator: String) -> Bool {
        validator.utf8.first == UInt8(ascii: "\"") || !validator.utf8.contains(UInt8(ascii: " "))
    }

    /// Whether `validator` may bind the ranges of a split download to one version: only an
    /// entity tag may. A date cannot: a file replaced by another of the same size and the same
    /// modification time (a mirror updated with `rsync -t` or `cp -p`, a tar extraction) keeps its
    /// `Last-Modified`, the server honours `If-Range` with it, and ranges fetched at once would be
    /// published as a mix of two versions. One stream may still continue by a date, with the risk
    /// Docs/ResumableDownloads.md names ("What a date can back").
    static func bindsSegments(_ validator: String) -> Bool {
        isEntityTag(validator)
    }

    /// The value an answer carries in the place of `validator`: its `ETag` when `validator` is
    /// an entity tag, else its `Last-Modified`. Whether a ranged answer belongs to the version
    /// asked for compares this with `validator` (``RangeContinuation``, ``SegmentAnswerCheck``).
    static func counterpart(of validator: String, etag: String?, lastModified: String?) -> String? {
        isEntityTag(validator) ? etag : lastModified
    }

    /// `value` without surrounding blanks when it is a strong tag: quoted (`"…"` with no `"`
    /// inside), or bare and made only of the characters a quoted tag may hold, other than a
    /// space. `W/` marks a weak tag.
    private static func strongEntityTag(_ value: String) -> String? {
        let utf8 = value.utf8
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) }) else {
            return nil
        }
        let tag = utf8[first...last]
        let allowed = { (byte: UInt8) in byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80 }
        if tag.starts(with: "W/".utf8) { return nil }
        if tag.first == 0x22 {
            guard tag.count >= 2, tag.last == 0x22, tag.dropFirst().dropLast().allSatisfy(allowed) else { return nil }
        } else {
            guard tag.allSatisfy(allowed) else { return nil }
        }
        return first == utf8.startIndex && last == utf8.index(before: utf8.endIndex) ? value : String(value[first...last])
    }
}
