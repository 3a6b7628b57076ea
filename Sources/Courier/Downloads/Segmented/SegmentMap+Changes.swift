extension SegmentMap {
    /// What one ``advance(_:by:)`` did.
    struct Advance: Sendable, Equatable {
        /// The bytes counted: at most what is left of the connection's range. The download
        /// writes only these (anything past the range belongs to another segment).
        var accepted: Int64
        /// Whether the connection's range is now complete (it has nothing more to fetch).
        var completedRange: Bool
        /// The other connection of an end-game race this advance decided: cancel it.
        var cancel: ConnectionID?
    }

    /// Gives `connection` the bytes `range`: an idle segment's untouched rest (from its next
    /// byte to its end), or the untouched tail of any segment from an offset inside it, which
    /// splits that segment there (its owner, if any, then stops at the new end). Written bytes
    /// never change hands.
    mutating func assign(_ connection: ConnectionID, range: Range<Int64>) throws(SegmentMapError) {
        guard index(of: connection) == nil else { throw .connection(connection, "already works on a range") }
        guard let index = segments.firstIndex(where: { $0.next <= range.lowerBound && range.lowerBound < $0.end }),
            range.upperBound == segments[index].end, segments[index].duplicate == nil
        else { throw .notFree(range) }
        if range.lowerBound == segments[index].next {
            guard segments[index].owner == nil else { throw .notFree(range) }
            segments[index].owner = connection
            return
        }
        guard segments.count < Self.maximumSegments else { throw .tooManySegments(segments.count + 1) }
        segments[index].end = range.lowerBound
        segments.insert(Segment(start: range.lowerBound, end: range.upperBound, written: 0, owner: connection), at: index + 1)
    }

    /// Starts the end game's second connection over the untouched tail of `owner`'s segment,
    /// from the owner's next byte: whichever of the two reaches the end first completes it.
    mutating func duplicate(_ connection: ConnectionID, racing owner: ConnectionID) throws(SegmentMapError) {
        guard index(of: connection) == nil else { throw .connection(connection, "already works on a range") }
        guard let index = segments.firstIndex(where: { $0.owner == owner }) else {
            throw .connection(owner, "owns no range to duplicate")
        }
        guard segments[index].duplicate == nil, segments[index].remaining > 0 else {
            throw .notFree(segments[index].next..<segments[index].end)
        }
        segments[index].duplicate = Duplicate(connection: connection, from: segments[index].next)
    }

    /// Counts `count` bytes that `connection` wrote at its position (``position(of:)``),
    /// clipped to its range's end; completing a range releases its connection, and ends an
    /// end-game race (the loser is returned to be cancelled).
    mutating func advance(_ connection: ConnectionID, by count: Int64) throws(SegmentMapError) -> Advance {
        guard count >= 0 else { throw .outOfBounds("a negative byte count \(count)") }
        guard let index = index(of: connection) else { throw .connection(connection, "works on no range") }
        var segment = segments[index]
        var result = Advance(accepted: 0, completedRange: false, cancel: nil)
        if segment.owner == connection {
            result.accepted = min(count, segment.remaining)
            segment.written += result.accepted
            if segment.isComplete {
                result.completedRange = true
                result.cancel = segment.duplicate?.connection
            }
        } else if var duplicate = segment.duplicate {
            result.accepted = min(count, segment.end - duplicate.next)
            duplicate.written += result.accepted
            segment.duplicate = duplicate
            if duplicate.next == segment.end {
                // The owner wrote start..<next and the duplicate from..<end with from <= next:
                // together, the whole range.
                segment.written = segment.size
                result.completedRange = true
                result.cancel = segment.owner
            }
        }
        if segment.isComplete {
            segment.owner = nil
            segment.duplicate = nil
        }
        segments[index] = segment
        mergeCompleted()
        return result
    }

    /// Takes `connection` off its range (it stopped, failed or was cancelled): an owner's
    /// segment becomes idle with the bytes it wrote, and its end-game duplicate, if any, is
    /// returned to be cancelled too (its bytes were never counted).
    @discardableResult
    mutating func release(_ connection: ConnectionID) -> ConnectionID? {
        guard let index = index(of: connection) else { return nil }
        if segments[index].owner == connection {
            let duplicate = segments[index].duplicate?.connection
            segments[index].owner = nil
            segments[index].duplicate = nil
            return duplicate
        }
        segments[index].duplicate = nil
        return nil
    }

    /// Gives the untouched idle segments that follow `connection`'s range back to it, up to
    /// `end` (where its current request's answer stops): a range refused to another connection
    /// then costs no new request, because the bytes are already on their way. Not while an end
    /// game races the range (the duplicate's request stops at the old end). Returns whether the
    /// range grew.
    @discardableResult
    mutating func extend(_ connection: ConnectionID, through end: Int64) -> Bool {
        guard let index = segments.firstIndex(where: { $0.owner == connection }), segments[index].duplicate == nil else {
            return false
        }
        var grew = false
        while index + 1 < segments.count, segments[index + 1].owner == nil, segments[index + 1].written == 0,
            segments[index + 1].end <= end
        {
            segments[index].end = segments[index + 1].end
            segments.remove(at: index + 1)
            grew = true
        }
        return grew
    }

    /// Takes every connection off the map, as a record stores it (and as a rerun reads it).
    var withoutConnections: SegmentMap {
        var copy = self
        for index in copy.segments.indices {
            copy.segments[index].owner = nil
            copy.segments[index].duplicate = nil
        }
        return copy
    }

    /// Merges each complete segment into the one after it (whose bytes then continue the
    /// complete prefix), so a map, and its record, stays as small as the work in flight.
    private mutating func mergeCompleted() {
        var merged: [Segment] = []
        merged.reserveCapacity(segments.count)
        for segment in segments {
            if let last = merged.last, last.isComplete {
                merged[merged.count - 1] = Segment(
                    start: last.start, end: segment.end, written: last.size + segment.written, owner: segment.owner,
                    duplicate: segment.duplicate)
            } else {
                merged.append(segment)
            }
        }
        segments = merged
    }
}
