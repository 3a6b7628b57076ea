import Foundation

/// What a segmented download does with each answer, so that a file is never made of two
/// versions (Docs/SegmentedDownloads.md, "Rules"). Pure: every row is unit-tested without
/// sockets. It adds the segment rules to those of ``RangeContinuation`` (the `Content-Range`
/// parse, start, total, `Content-Length`, a changed validator) and ``StrongValidator``, and
/// parses nothing again.
///
/// The first request asks `Range: bytes=0-` with `Accept-Encoding: identity` and no `If-Range`
/// (nothing is held yet); its answer is the transfer's, decided as one stream's, and whether it
/// starts a split is `TransferState.segmentsToBegin`'s. Every later request asks one segment,
/// `Range: bytes=a-b` with the map's entity tag as `If-Range`.
enum SegmentAnswerCheck {
    /// The parts of a response the decisions read: the same as a single stream's.
    typealias Answer = RangeContinuation.Answer

    /// What to do with the answer to a segment's request.
    enum Segment: Sendable, Equatable {
        /// A 206 proving the asked bytes of the same version: write them, up to `end`.
        case write(end: Int64)
        /// The answer does not prove it holds the asked bytes of this version (a 200 after
        /// parallel work began, another validator, another length, another start or end, a 416,
        /// a 412 to `If-Match`): discard
        /// every byte held and start the download over. Never publish a mix.
        case restart(String)
        /// The answer contradicts HTTP or cannot prove anything (a malformed `Content-Range`, a
        /// `Content-Length` other than its range's, no complete length, no validator, a
        /// `Content-Encoding`): fail, publishing nothing.
        case fail(String)
        /// Not the file's bytes (429, 503, another error status): the retry model and the
        /// connection count (``AdaptiveConnectionCount``) decide.
        case notBytes(status: Int)
    }

    /// Decides about the answer to a request for `asked` of a file of `length` bytes bound to
    /// `validator` (sent as `If-Range`).
    static func segment(asked: Range<Int64>, length: Int64, validator: String, _ answer: Answer) -> Segment {
        switch answer.status {
        case 206:
            if answer.isEncoded { return .fail("a ranged answer with Content-Encoding \(answer.contentEncoding ?? "")") }
            switch RangeContinuation.decide(offset: asked.lowerBound, knownTotal: length, validator: validator, answer: answer) {
            case .append(let end):
                guard answer.contentRange.flatMap(ContentRange.init)?.completeLength == length else {
                    return .fail("a 206 without the complete length (\(answer.contentRange ?? ""))")
                }
                guard end == asked.upperBound else {
                    return .restart(
                        "a 206 for bytes \(asked.lowerBound)..<\(end) where \(asked.lowerBound)..<\(asked.upperBound) were asked")
                }
                guard StrongValidator.counterpart(of: validator, etag: answer.etag, lastModified: answer.lastModified) == validator else {
                    return .fail("a 206 that does not carry the validator \(validator)")
                }
                return .write(end: end)
            case .restartWithoutRange(let why):
                return .restart(why)
            case .invalid(let why):
                return .fail(why)
            case .replace, .alreadyComplete:
                return .fail("a 206 that is not a range")
            }
        case 200:
            return .restart("a 200 to a segment's request (the resource changed, or Range is no longer honoured)")
        case 412, 416:
            return .restart("a \(answer.status) to bytes \(asked.lowerBound)..<\(asked.upperBound) (the resource changed)")
        default:
            return .notBytes(status: answer.status)
        }
    }
}
