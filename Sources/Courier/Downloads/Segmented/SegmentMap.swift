import Foundation

/// The state of one file fetched over several `Range` connections: which bytes are written,
/// which connection writes which range, bound to the resource (URL, strong validator, length)
/// the bytes came from. A pure value: no sockets, no clocks, no file; the download applies what
/// it decides (Docs/SegmentedDownloads.md, "Rules").
///
/// The segments tile `0..<length` at every moment: sorted, no gap, no overlap, none empty. Each
/// holds the bytes written contiguously from its start (`written`), so what a record claims is
/// always a set of prefixes, and a byte belongs to exactly one segment. A segment's untouched
/// tail can be split off for another connection; its written bytes never move.
struct SegmentMap: Sendable, Equatable {
    /// The most segments a map holds, and the most a record may claim: with the connection cap
    /// far below it, a map never needs more, and a record that claims more was not written by
    /// Courier.
    static let maximumSegments = 1024

    /// The resource the bytes belong to, without user or password.
    let url: URL
    /// The strong entity tag every ranged request carries (`If-Range`) and every answer must
    /// carry back: without one there is no proof two ranges are of one version, so no map (a
    /// date is no proof: ``StrongValidator/bindsSegments(_:)``; a map kept with one is not continued).
    let validator: String
    /// The file's complete length, from the first answer's `Content-Range`.
    let length: Int64
    /// The segments, sorted by start, tiling `0..<length`. Changed only by the operations of
    /// SegmentMap+Changes.swift (an extension in another file cannot use a `private(set)`),
    /// which keep the invariants ``violation()`` checks.
    var segments: [Segment]

    /// One range of the file and the bytes written at its start.
    struct Segment: Sendable, Equatable {
        /// The first byte of the range.
        var start: Int64
        /// One past the last byte of the range.
        var end: Int64
        /// The bytes written contiguously from `start` (and flushed, in a record).
        var written: Int64
        /// The connection writing this segment's next bytes; `nil` when none (never stored).
        var owner: ConnectionID? = nil
        /// The end game's second connection over the same tail, if any (never stored).
        var duplicate: Duplicate? = nil

        /// The next byte to write.
        var next: Int64 { start + written }
        /// The bytes not yet written.
        var remaining: Int64 { end - next }
        /// The range's size.
        var size: Int64 { end - start }
        var isComplete: Bool { written == size }
    }

    /// A second connection fetching the tail `from..<end` of a slow segment in the end game;
    /// the first of the two to reach the end completes the segment, the other is cancelled.
    struct Duplicate: Sendable, Equatable {
        var connection: ConnectionID
        /// Where the duplicate's range starts: at most the owner's next byte when it began, so
        /// the owner's bytes and the duplicate's cover the segment without a gap.
        var from: Int64
        /// The bytes the duplicate wrote from `from` (counted for the map only if it wins).
        var written: Int64 = 0
        var next: Int64 { from + written }
    }

    /// A map with nothing written and no connection: one segment over the whole file.
    init(url: URL, validator: String, length: Int64) {
        precondition(length >= 0, "a negative length")
        self.url = url
        self.validator = validator
        self.length = length
        self.segments = length > 0 ? [Segment(start: 0, end: length, written: 0)] : []
    }

    /// A map from stored segments, refused when they are not a valid tiling of `length`.
    init(url: URL, validator: String, length: Int64, segments: [Segment]) throws(SegmentMapError) {
        self.url = url
        self.validator = validator
        self.length = length
        self.segments = segments
        if let problem = violation() { throw problem }
    }

    // MARK: - Queries

    /// Every byte written.
    var isComplete: Bool { segments.allSatisfy(\.isComplete) }

    /// The bytes written, each counted once.
    var writtenBytes: Int64 { segments.reduce(0) { $0 + $1.written } }

    /// The bytes written contiguously from byte 0: what a reader that knows nothing of segments
    /// may keep (the record's `bytesOnDisk`).
    var contiguousPrefix: Int64 {
        var prefix: Int64 = 0
        for segment in segments {
            prefix = segment.next
            if !segment.isComplete { break }
        }
        return prefix
    }

    /// One past the last byte written anywhere: the partial file must hold at least this many
    /// bytes for the map to be continued.
    var highestWrittenOffset: Int64 {
        segments.last(where: { $0.written > 0 }).map(\.next) ?? 0
    }

    /// The connections working on the file (owners and duplicates), in order.
    var connections: [ConnectionID] {
        segments.flatMap { [$0.owner, $0.duplicate?.connection].compactMap { $0 } }.sorted()
    }

    /// The index of the segment `connection` owns or duplicates.
    func index(of connection: ConnectionID) -> Int? {
        segments.firstIndex { $0.owner == connection || $0.duplicate?.connection == connection }
    }

    /// Where `connection` writes its next byte, and the end of its range.
    func position(of connection: ConnectionID) -> Range<Int64>? {
        guard let index = index(of: connection) else { return nil }
        let segment = segments[index]
        if segment.owner == connection { return segment.next..<segment.end }
        return segment.duplicate.map { $0.next..<segment.end }
    }

    /// The first broken invariant, if any: the segments must tile `0..<length` (sorted, no gap,
    /// no overlap, none empty), stay within `maximumSegments`, hold `0...size` written bytes, be
    /// owned by at most one connection each (and each connection own at most one), hold no
    /// connection once complete, and a duplicate must cover the owner's tail.
    func violation() -> SegmentMapError? {
        guard length >= 0 else { return .outOfBounds("a negative length \(length)") }
        guard segments.count <= Self.maximumSegments else { return .tooManySegments(segments.count) }
        var expectedStart: Int64 = 0
        var seen = Set<ConnectionID>()
        for segment in segments {
            if segment.start < expectedStart { return .overlap(at: segment.start) }
            if segment.start > expectedStart { return .gap(expectedStart..<segment.start) }
            guard segment.end > segment.start, segment.end <= length else {
                return .outOfBounds("the range \(segment.start)..<\(segment.end) in a file of \(length) bytes")
            }
            guard segment.written >= 0, segment.written <= segment.size else {
                return .outOfBounds("\(segment.written) bytes written in a range of \(segment.size)")
            }
            for connection in [segment.owner, segment.duplicate?.connection].compactMap({ $0 }) {
                guard seen.insert(connection).inserted else { return .connection(connection, "works on two ranges") }
            }
            if segment.isComplete, segment.owner != nil || segment.duplicate != nil {
                return .connection(segment.owner ?? segment.duplicate!.connection, "still holds a complete range")
            }
            if let duplicate = segment.duplicate {
                guard segment.owner != nil, duplicate.from >= segment.start, duplicate.from <= segment.next,
                    duplicate.written >= 0, duplicate.next <= segment.end
                else { return .connection(duplicate.connection, "duplicates a range it does not cover") }
            }
            expectedStart = segment.end
        }
        if expectedStart != length { return .gap(expectedStart..<length) }
        return nil
    }
}
