/// How many connections one download may use: one (the default), a fixed number, or a number
/// Courier finds by itself (Docs/SegmentedDownloads.md).
///
/// A split download asks its first request for `bytes=0-`. Only when the answer proves that the
/// server serves ranges of one version (a 206 with the file's complete length and a strong
/// validator) does it fetch the rest over further connections, each a `Range` request with
/// `If-Range`; otherwise the download is one sequential stream, as without a split.
public struct DownloadSplit: Sendable, Hashable, CustomStringConvertible {
    /// The most connections one download may use, whatever is asked.
    public static let maximumConnections = 64

    /// How the number of connections is chosen.
    public enum Mode: Sendable, Hashable {
        /// Exactly this many connections while there is work for them (1: no split).
        case fixed(Int)
        /// Start with one; add one while the total throughput rises, halve on 429, 503,
        /// `Retry-After` or a reset; never more than `maximum` (nor the per-host cap).
        case automatic(maximum: Int)
    }

    /// How the number of connections is chosen.
    public let mode: Mode

    private init(mode: Mode) { self.mode = mode }

    /// One connection: no split (the default).
    public static let off = DownloadSplit(mode: .fixed(1))

    /// Exactly `count` connections (clamped to 1…``maximumConnections``).
    public static func connections(_ count: Int) -> DownloadSplit {
        DownloadSplit(mode: .fixed(min(max(count, 1), maximumConnections)))
    }

    /// As many connections as pay, up to 16 (and the per-host cap).
    public static let automatic = DownloadSplit(mode: .automatic(maximum: 16))

    /// As many connections as pay, up to `maximum` (clamped to 1…``maximumConnections``) and the per-host cap.
    public static func automatic(upTo maximum: Int) -> DownloadSplit {
        DownloadSplit(mode: .automatic(maximum: min(max(maximum, 1), maximumConnections)))
    }

    /// Reads a command-line value: `off`, `auto`, `auto:N` or a count `N` (1…``maximumConnections``);
    /// `nil` for anything else.
    public init?(argument: String) {
        if argument == "off" {
            self = .off
            return
        }
        if argument == "auto" {
            self = .automatic
            return
        }
        if argument.hasPrefix("auto:") {
            guard let maximum = Int(argument.dropFirst(5)), (1...Self.maximumConnections).contains(maximum) else {
                return nil
            }
            self = .automatic(upTo: maximum)
            return
        }
        guard let count = Int(argument), (1...Self.maximumConnections).contains(count) else { return nil }
        self = .connections(count)
    }

    /// Whether more than one connection may be used.
    public var isSplit: Bool {
        switch mode {
        case .fixed(let count): return count > 1
        case .automatic(let maximum): return maximum > 1
        }
    }

    /// The most connections this allows under a per-host cap (`nil`: none).
    public func cap(perHost: Int?) -> Int {
        let wanted: Int
        switch mode {
        case .fixed(let count): wanted = count
        case .automatic(let maximum): wanted = maximum
        }
        return max(1, min(wanted, perHost ?? wanted))
    }

    /// `off`, `N` or `auto:N`, as ``init(argument:)`` reads it.
    public var description: String {
        switch mode {
        case .fixed(1): return "off"
        case .fixed(let count): return String(count)
        case .automatic(let maximum): return "auto:\(maximum)"
        }
    }
}
