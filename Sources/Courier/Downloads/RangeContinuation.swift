import Foundation

/// What to do with the answer to a request that asked for the rest of a body with
/// `Range: bytes=N-` and `If-Range`. Pure, so every row is unit-tested without sockets.
///
/// The rule is never to splice two versions of a resource, and never to take a server's word
/// for more than its own headers prove: bytes are appended only when a 206 starts exactly at the
/// bytes already held, describes the same total length, carries the validator that was sent (when
/// it carries one), and whose `Content-Length`, when it has one, is its range's length.
enum RangeContinuation: Equatable, Sendable {
    /// 206 at the right offset: append the new bytes to those already held, up to `end`
    /// (exclusive) — the range's own end; anything past it is not part of the answer.
    case append(end: Int64)
    /// A full answer (200, or any other final status but 206 and 416): drop what is held and
    /// take this body.
    case replace
    /// 416 saying the representation is exactly as long as what is held (and as every earlier
    /// response said): already complete.
    case alreadyComplete
    /// The answer does not prove it continues these bytes (other start, other total, another
    /// validator, a 416 that contradicts an earlier length): discard this answer and what is held,
    /// and fetch again from zero without `Range`.
    case restartWithoutRange(String)
    /// The answer contradicts itself or HTTP (an unparsable `Content-Range`, a `Content-Length`
    /// other than the range's length): fail this attempt, appending nothing.
    case invalid(String)

    /// The parts of a response the decision reads.
    struct Answer: Sendable {
        var status: Int
        var contentRange: String?
        /// The `Content-Length` as Courier parsed it (``ContentLength``); `nil` when absent.
        var contentLength: Int64?
        var etag: String? = nil
        var lastModified: String? = nil
        /// Read by the segment rules (``SegmentAnswerCheck``), which refuse an encoded range.
        var contentEncoding: String? = nil

        /// A `Content-Encoding` other than `identity`: the bytes are not the ones ranges address.
        var isEncoded: Bool { Self.isEncoded(contentEncoding) }

        /// Whether a `Content-Encoding` value encodes the body (anything but empty or `identity`);
        /// the one rule for single streams (``FileBody``) and segments alike.
        static func isEncoded(_ contentEncoding: String?) -> Bool {
            guard let contentEncoding else { return false }
            let coding = contentEncoding.trimmingCharacters(in: .whitespaces).lowercased()
            return !coding.isEmpty && coding != "identity"
        }
    }

    /// Decides about `answer` to a request for the bytes from `offset` on, sent with `validator`
    /// as `If-Range` (if any), when earlier responses announced `knownTotal` bytes (if any).
    static func decide(offset: Int64, knownTotal: Int64?, validator: String?, answer: Answer) -> RangeContinuation {
        switch answer.status {
        case 206:
            guard let header = answer.contentRange else { return .invalid("a 206 without Content-Range") }
            guard let range = ContentRange(header), let first = range.first, let length = range.length else {
                return .invalid("a 206 with a malformed Content-Range (\(header.debugDescription))")
            }
            if let contentLength = answer.contentLength, contentLength != length {
                return .invalid("a 206 whose Content-Length (\(contentLength)) is not its range's length (\(length))")
            }
            if let changed = changedValidator(sent: validator, answer) {
                return .restartWithoutRange("the resource changed (If-Range \(validator ?? ""), the 206 carries \(changed))")
            }
            guard first == offset else {
                return .restartWithoutRange("a 206 starting at byte \(first), not at \(offset)")
            }
            if let knownTotal, let total = range.completeLength, total != knownTotal {
                return .restartWithoutRange("a 206 for \(total) bytes where \(knownTotal) were announced")
            }
            return .append(end: first + length)
        case 416:
            // Complete only when the 416's length is the bytes held and every earlier announcement
            // agrees: a 416 that contradicts an earlier length is a server to fetch from again.
            guard let range = answer.contentRange.flatMap(ContentRange.init), range.first == nil,
                range.completeLength == offset, knownTotal == nil || knownTotal == offset
            else {
                return .restartWithoutRange("a 416 that does not prove the \(offset) bytes held complete")
            }
            return .alreadyComplete
        default:
            return .replace
        }
    }

    /// The validator a 206 carries when it is not the one sent as `If-Range`: a server or cache
    /// that ignores `If-Range` answers with the new version's bytes at the old offset.
    private static func changedValidator(sent validator: String?, _ answer: Answer) -> String? {
        // Weak ETags never went out as If-Range; a weak one back is another version too.
        guard let validator,
            let carried = StrongValidator.counterpart(of: validator, etag: answer.etag, lastModified: answer.lastModified),
            carried != validator
        else { return nil }
        return carried
    }
}

/// `Content-Length` read by Courier: libcurl takes a malformed value such as `0x5` for 0 and
/// would end the body there, so a value that is not plain decimal digits is refused.
enum ContentLength: Equatable, Sendable {
    case absent
    case length(Int64)
    case malformed(String)
    /// A length no file has, from ``firstImpossible`` up: the answer is treated as a connection
    /// that broke (``CourierError/impossibleLength(_:_:)``), retried and continued like one.
    case impossible(String)

    /// The smallest length that is no file's: libcurl hands a length over as a `Double`, from
    /// here `Int64(_:)` traps in FoundationNetworking, and the platform kit reports it as unknown
    /// (Docs/PlatformFixes.md). Without the kit such an answer killed the process and
    /// `courier get` restarted it; with it, the answer is one more broken connection.
    static let firstImpossible: Int64 = Int64.max - 511

    /// Parses the header's value as the response carried it. A list of identical values (what a
    /// repeated header becomes once joined) is that value, as RFC 9110 §8.6 allows.
    static func parse(_ value: String?) -> ContentLength {
        guard let value else { return .absent }
        // The common case, without splitting: one plain number.
        if value.utf8.count <= 19, !value.isEmpty, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int64(value) {
            return length < firstImpossible ? .length(length) : .impossible(value)
        }
        let parts = value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, parts.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 19,
            first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int64(first)
        else { return .malformed(value) }
        return length < firstImpossible ? .length(length) : .impossible(value)
    }
}
