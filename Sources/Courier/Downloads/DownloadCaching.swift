/// Whether a file download uses its manager's ``ResponseCache``, and for files of what size
/// (issue 32: "file downloads only under an explicit opt-in with its own size bound").
///
/// Off by default: a download's body may be large, and storing it means holding it in memory
/// once more and writing it to the cache besides the destination. With ``upTo(bytes:)``:
///
/// - a fresh stored answer (or a stale one the request accepts, `max-stale`,
///   `returnCacheDataElseLoad`) is written to a staging file and published at the destination
///   exactly as a network body is — the same validation, destination closure, integrity checks
///   (``DownloadPolicy/expectedLength``, ``DownloadPolicy/expectedSHA256``) and one atomic rename;
/// - a stale stored answer with a validator is revalidated: the origin's `304` gives the stored
///   body, published the same way;
/// - a complete `200` of at most this many bytes is stored when the rules of RFC 9111 allow it; a
///   larger one, one continued with `Range`, and a split download's never are.
///
/// A download never falls back to a stored answer when the origin fails, and is never answered
/// with a part.
/// A split download (``DownloadPolicy/split``) ignores this: it never uses the cache.
public struct DownloadCaching: Sendable, Hashable, CustomStringConvertible {
    /// The largest body stored, in bytes; `nil` when the cache is not used.
    public let maximumBytes: Int?

    private init(maximumBytes: Int?) { self.maximumBytes = maximumBytes }

    /// The cache is neither read nor written (the default).
    public static let off = DownloadCaching(maximumBytes: nil)

    /// Answers from the cache and stores bodies of at most `bytes` (negative counts as 0).
    public static func upTo(bytes: Int) -> DownloadCaching {
        DownloadCaching(maximumBytes: max(0, bytes))
    }

    /// `off`, or `up to N bytes`.
    public var description: String {
        maximumBytes.map { "up to \($0) bytes" } ?? "off"
    }
}
