import Foundation
internal import CourierSupport

/// A `Range` request answered from a stored response: the status, the `Content-Range` value and
/// which bytes of the stored body go out.
struct CacheRangeAnswer: Sendable, Equatable {
    /// `206`, or `416` when the range selects nothing of the representation.
    var status: Int
    /// `bytes first-last/length`, or `bytes */length` for a `416`.
    var contentRange: String
    /// The bytes of the stored body sent (empty for a `416`).
    var bodyRange: Range<Int>
}

/// The part of a representation a stored `206` holds: `Content-Range: bytes first-last/length`.
struct CacheExtent: Sendable, Equatable {
    var range: ClosedRange<Int>
    var length: Int
}

extension CachePolicy {
    // MARK: - Serving a range (RFC 9111 §3.3 and §4, RFC 9110 §14)

    /// The range a cache may answer for `request`: a `GET` with one `Range` line holding a
    /// single byte range and no precondition of its own (`If-Range`, `If-Match`…). `nil`: the
    /// request is not one the cache answers partially (it bypasses the cache, as before).
    static func requestedRange(_ request: CacheRequest) -> CacheByteRange? {
        guard request.method == "GET" else { return nil }
        let lines = request.headers.values("Range")
        guard lines.count == 1, let range = CacheByteRange.parse(lines[0]) else { return nil }
        var others = request
        others.headers.remove("Range")
        return hasOwnConditions(others) ? nil : range
    }

    /// What a stored response answers for `range`, or `nil` when it cannot: a whole `200`
    /// answers every range (a `416` when it selects nothing); a partial entry only a range that
    /// lies inside the bytes it holds. A content-encoded body never: its stored bytes are the
    /// decoded ones, and ranges address the encoded ones.
    static func rangeAnswer(_ head: CacheEntryHead, range: CacheByteRange) -> CacheRangeAnswer? {
        guard !isContentEncoded(head.headers) else { return nil }
        switch head.status {
        case 200:
            let length = head.bodyLength
            guard let selected = range.resolved(length: length) else {
                return CacheRangeAnswer(status: 416, contentRange: "bytes */\(length)", bodyRange: 0..<0)
            }
            return CacheRangeAnswer(
                status: 206, contentRange: "bytes \(selected.lowerBound)-\(selected.upperBound)/\(length)",
                bodyRange: selected.lowerBound..<(selected.upperBound + 1))
        case 206:
            guard let extent = partialExtent(head), let selected = range.resolved(length: extent.length),
                extent.range.contains(selected.lowerBound), extent.range.contains(selected.upperBound)
            else { return nil }
            let offset = extent.range.lowerBound
            return CacheRangeAnswer(
                status: 206, contentRange: "bytes \(selected.lowerBound)-\(selected.upperBound)/\(extent.length)",
                bodyRange: (selected.lowerBound - offset)..<(selected.upperBound + 1 - offset))
        default:
            return nil
        }
    }

    /// The fields of a range answer built from a stored response's served fields: its own
    /// `Content-Range` and `Content-Length` (RFC 9110 §15.3.7: a 206 carries the fields a 200
    /// would, the range's length and its place).
    static func rangeHeaders(_ served: CacheHeaders, answer: CacheRangeAnswer) -> CacheHeaders {
        var headers = served
        headers.set("Content-Range", answer.contentRange)
        headers.set("Content-Length", String(answer.bodyRange.count))
        return headers
    }

    // MARK: - Storing and combining 206 answers (RFC 9111 §3.3, §3.4)

    /// The part a stored `206` holds, from its `Content-Range`: one satisfied range with a known
    /// length whose size is the stored body's. `nil` for anything else (`*` as the length, a
    /// multipart answer, a body of another size): such an answer is not stored.
    static func partialExtent(_ head: CacheEntryHead) -> CacheExtent? {
        let lines = head.headers.values("Content-Range")
        guard lines.count == 1, let parsed = ContentRange(lines[0]), let first = parsed.first, let last = parsed.last,
            let length = parsed.completeLength, let count = parsed.length, Int64(head.bodyLength) == count,
            let lower = Int(exactly: first), let upper = Int(exactly: last), let total = Int(exactly: length)
        else { return nil }
        return CacheExtent(range: lower...upper, length: total)
    }

    /// What to store for a `206` (`incoming`, its body `body`) given the variant's stored entry,
    /// or `nil` to store nothing. Bounded and simple: an entry holds one run of bytes.
    ///
    /// - A `206` the rules would store were it a `200` (freshness, `no-store`, `Vary`), with one
    ///   range of a known length, no content coding, and a body of the range's size, is kept as a
    ///   partial entry; one covering the whole representation becomes a whole `200`.
    /// - It is combined with the stored partial entry only when both carry the same **strong**
    ///   `ETag`, the same length, and their runs overlap or touch (§3.4); the new fields replace
    ///   the stored ones, `Content-Range` aside. When the runs then cover the representation, the
    ///   entry becomes a whole `200` with a `Content-Length`.
    /// - A stored whole `200` with the same strong `ETag` is kept (it holds every byte already);
    ///   otherwise, and with a weak, missing or different validator, the newer answer replaces the
    ///   stored one: bytes of two versions are never mixed.
    static func partialToStore(_ incoming: CacheEntryHead, body: Data, stored: CacheEntry?) -> CacheEntry? {
        guard incoming.status == 206, !isContentEncoded(incoming.headers), let extent = partialExtent(incoming) else { return nil }
        let tag = strongTag(incoming.headers)
        if let stored, let tag, tag == strongTag(stored.head.headers) {
            if stored.head.status == 200 { return nil }
            if stored.head.status == 206, let have = partialExtent(stored.head), have.length == extent.length,
                have.range.lowerBound <= extent.range.upperBound + 1, extent.range.lowerBound <= have.range.upperBound + 1
            {
                return combined(stored, have, with: incoming, extent, body: body)
            }
        }
        return completed(CacheEntry(head: incoming, body: body), extent)
    }

    /// `stored` (holding `have`) and the new answer's bytes as one run, the new fields winning.
    private static func combined(
        _ stored: CacheEntry, _ have: CacheExtent, with incoming: CacheEntryHead, _ extent: CacheExtent, body: Data
    ) -> CacheEntry {
        let lower = min(have.range.lowerBound, extent.range.lowerBound)
        let upper = max(have.range.upperBound, extent.range.upperBound)
        // The stored bytes, then the new ones over them (a strong validator says they agree).
        var bytes = Data(count: upper - lower + 1)
        bytes.replaceSubrange((have.range.lowerBound - lower)..<(have.range.upperBound - lower + 1), with: stored.body)
        bytes.replaceSubrange((extent.range.lowerBound - lower)..<(extent.range.upperBound - lower + 1), with: body)
        var head = incoming
        var headers = stored.head.headers
        var replaced = Set<String>()
        for field in incoming.headers.fields {
            if replaced.insert(ASCIICase.lowercased(field.name)).inserted { headers.remove(field.name) }
            headers.append(field.name, field.value)
        }
        headers.set("Content-Range", "bytes \(lower)-\(upper)/\(extent.length)")
        headers.set("Content-Length", String(bytes.count))
        head.headers = headers
        head.bodyLength = bytes.count
        return completed(CacheEntry(head: head, body: bytes), CacheExtent(range: lower...upper, length: extent.length))
    }

    /// `entry` as a whole `200` when its run covers the representation; as it is otherwise.
    private static func completed(_ entry: CacheEntry, _ extent: CacheExtent) -> CacheEntry {
        guard extent.range.lowerBound == 0, extent.range.upperBound == extent.length - 1 else { return entry }
        var whole = entry
        whole.head.status = 200
        whole.head.headers.remove("Content-Range")
        whole.head.headers.set("Content-Length", String(extent.length))
        return whole
    }

    /// The strong entity tag of a response (``StrongValidator``), never a date: `Last-Modified`
    /// is strong only under conditions a cache cannot check (RFC 9110 §8.8.2.2).
    static func strongTag(_ headers: CacheHeaders) -> String? {
        guard let etag = headers["ETag"] else { return nil }
        return StrongValidator.of(etag: etag, lastModified: nil, contentEncoding: nil)
    }

    /// Whether the body has a content coding other than `identity`.
    static func isContentEncoded(_ headers: CacheHeaders) -> Bool {
        headers.listElements("Content-Encoding").contains { $0.lowercased() != "identity" }
    }
}
