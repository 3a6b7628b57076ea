/// What to do with the answer to a request that asked for the rest of a body with
/// `Range: bytes=N-` and `If-Range`. Pure, so every row is unit-tested without sockets.
///
/// The rule is never to splice two versions of a resource: bytes are appended only when a 206
/// proves it starts exactly at the bytes already held and describes the same total length.
enum RangeContinuation: Equatable, Sendable {
    /// 206 at the right offset: append the new bytes to those already held.
    case append
    /// A full answer (200, or any other final status): drop what is held and take this body.
    case replace
    /// 416 saying the representation is exactly as long as what is held: already complete.
    case alreadyComplete
    /// A 206 that does not prove the offset (other start, other total, unparsable): discard
    /// this answer and fetch again from zero without `Range`.
    case restartWithoutRange

    static func decide(offset: Int64, knownTotal: Int64?, status: Int, contentRange: String?) -> RangeContinuation {
        switch status {
        case 206:
            guard let range = contentRange.flatMap(ContentRange.init), range.first == offset else {
                return .restartWithoutRange
            }
            if let knownTotal, let total = range.completeLength, total != knownTotal { return .restartWithoutRange }
            return .append
        case 416:
            guard let range = contentRange.flatMap(ContentRange.init), range.first == nil,
                range.completeLength == offset
            else { return .replace }
            return .alreadyComplete
        default:
            return .replace
        }
    }
}
