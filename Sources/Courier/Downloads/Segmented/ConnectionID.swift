/// Which connection of a segmented download works on a segment: an identity the download gives
/// each of its connections (a lane's request), never reused within one download.
struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    let rawValue: Int

    init(_ rawValue: Int) { self.rawValue = rawValue }

    static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

    var description: String { "#\(rawValue)" }
}
