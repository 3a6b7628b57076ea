/// Why a segment map, a stored record of one, or a change to it is refused: typed, so a damaged
/// or hostile record is an error, never a trap nor a file of mixed bytes.
enum SegmentMapError: Error, Equatable, Sendable, CustomStringConvertible {
    case overlap(at: Int64)
    case gap(Range<Int64>)
    case outOfBounds(String)
    case tooManySegments(Int)
    case unsupportedVersion(Int)
    case malformed(String)
    /// A change that does not fit the map (a connection that owns nothing, a split inside
    /// written bytes, a range that is not free).
    case connection(ConnectionID, String)
    case notFree(Range<Int64>)

    var description: String {
        switch self {
        case .overlap(let offset): "two segments overlap at byte \(offset)"
        case .gap(let range): "no segment covers bytes \(range.lowerBound)..<\(range.upperBound)"
        case .outOfBounds(let what): "out of bounds: \(what)"
        case .tooManySegments(let count): "\(count) segments (at most \(SegmentMap.maximumSegments))"
        case .unsupportedVersion(let version): "segment map version \(version) is not supported"
        case .malformed(let why): "malformed: \(why)"
        case .connection(let connection, let why): "connection \(connection) \(why)"
        case .notFree(let range): "bytes \(range.lowerBound)..<\(range.upperBound) are not free"
        }
    }
}
