import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a download task publishes its file, and how.
///
/// The body is streamed into a private staging file (mode 0600) and published with one rename
/// only after it is complete and has passed validation, so the destination never holds an
/// incomplete body or an error page. A failed move is reported in the completion.
public struct DownloadDestination: Sendable {
    /// How to publish at the destination.
    public struct Options: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: Int
        /// Creates options from their raw value.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Create missing parent directories of the destination.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replace a file already at the destination (atomically). Without it, an existing file
        /// is an error and is left untouched.
        public static let removePreviousFile = Options(rawValue: 1 << 1)
    }

    /// When a destination closure is called.
    public enum Timing: Sendable {
        /// Once the body is complete, before publishing (the default): the closure may look at
        /// the file.
        case afterBody
        /// As soon as the accepted response's headers arrive, on the manager's callback queue
        /// (keep it quick: the manager's other callbacks wait for it). Courier checks the answer
        /// at once: a file already there (without ``Options/removePreviousFile``) or a throwing
        /// closure stops the download before its body is fetched, keeping whatever bytes it held
        /// for resuming. The closure's `temporaryURL` is the partial file, not yet complete.
        case atResponse
    }

    /// Decides the destination: `(temporaryURL, response) -> (URL, Options)`.
    public typealias Resolver = @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) throws -> (URL, Options)

    /// The directory the staging file is created in; `nil` means the manager's temporary
    /// directory. Staging next to the destination makes publishing a single atomic rename.
    public var stagingDirectory: URL?
    /// Options applied to the staging directory (create it when missing).
    var stagingOptions: Options
    /// The destination, when it is known before the body arrives (``file(_:options:)``).
    var fixedURL: URL?
    /// When the destination closure (the ``Resolver``) is called.
    public let timing: Timing
    let resolve: Resolver

    /// A destination decided by `resolve` — after the body has arrived, or with `.atResponse` as
    /// soon as the headers have — with the body staged in `stagingDirectory` (or the manager's
    /// temporary directory). `resolve` is called once.
    public init(stagingDirectory: URL? = nil, timing: Timing = .afterBody, _ resolve: @escaping Resolver) {
        self.stagingDirectory = stagingDirectory
        self.stagingOptions = []
        self.fixedURL = nil
        self.timing = timing
        self.resolve = resolve
    }

    /// A fixed file. The body is staged next to it, so publishing is one rename. Without
    /// ``Options/removePreviousFile``, a file already there fails the task before anything is sent.
    public static func file(_ url: URL, options: Options = []) -> DownloadDestination {
        var destination = DownloadDestination(stagingDirectory: url.deletingLastPathComponent()) { _, _ in
            (url, options)
        }
        destination.stagingOptions = options
        destination.fixedURL = url
        return destination
    }
}

extension DownloadDestination {
    /// This destination with `check` asked right before the file is published: after the body
    /// is complete, validated and checked, before the rename. When it throws, nothing is
    /// published and the task fails with its error (the DownloadQueue's publication gate). For
    /// destinations decided after the body (`.afterBody`), whose closure runs at that moment.
    func checking(beforePublishing check: @escaping @Sendable () throws(CourierError) -> Void) -> DownloadDestination {
        assert(timing == .afterBody, "an .atResponse closure runs before the body, not before publishing")
        let resolve = self.resolve
        var checked = DownloadDestination(stagingDirectory: stagingDirectory, timing: timing) { staged, response in
            try check()
            return try resolve(staged, response)
        }
        checked.stagingOptions = stagingOptions
        checked.fixedURL = fixedURL
        return checked
    }
}
