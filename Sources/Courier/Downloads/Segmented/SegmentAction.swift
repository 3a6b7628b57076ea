/// What a segmented download does next, decided by ``SegmentScheduler`` and applied to the
/// ``SegmentMap`` with ``SegmentMap/apply(_:)`` by the download, which then acts on it.
enum SegmentAction: Sendable, Equatable {
    /// Start `connection` on `range` (an idle range's rest, or the tail of a working
    /// connection's range from its midpoint).
    case start(ConnectionID, range: Range<Int64>)
    /// Give `to` the untouched tail of `from`'s range from byte `at` on; `from` stops at `at`.
    case steal(from: ConnectionID, at: Int64, to: ConnectionID)
    /// End game: `connection` fetches the untouched tail of `racing`'s range too; the first of
    /// the two to finish completes it and the other is cancelled.
    case duplicate(ConnectionID, racing: ConnectionID)
    /// Stop `connection`: fewer connections are wanted, or it has nothing left to do. Its
    /// range, if any, becomes idle with the bytes it wrote.
    case stop(ConnectionID)
    /// Nothing to change.
    case none
}

extension SegmentMap {
    /// Applies a scheduler's action to the map; `.none` changes nothing. Returns the end-game
    /// partner to cancel when a stop takes an owner off its range.
    @discardableResult
    mutating func apply(_ action: SegmentAction) throws(SegmentMapError) -> ConnectionID? {
        switch action {
        case .start(let connection, let range):
            try assign(connection, range: range)
        case .steal(let owner, let offset, let thief):
            guard let index = segments.firstIndex(where: { $0.owner == owner }) else {
                throw .connection(owner, "owns no range to give away")
            }
            try assign(thief, range: offset..<segments[index].end)
        case .duplicate(let connection, let owner):
            try duplicate(connection, racing: owner)
        case .stop(let connection):
            return release(connection)
        case .none:
            break
        }
        return nil
    }
}
