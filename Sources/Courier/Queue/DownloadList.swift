import Foundation
internal import CourierSupport

/// A list of downloads, one a line — `URL [sha256=<hex>] [out=<name>]`, blank lines and `#`
/// comments skipped — taken one line at a time as an ``InputSpool`` reads them: `courier get -i`'s
/// format. Each line gets a queue item id that stays the same on every run (``Entry/id``), so
/// ``DownloadQueue/reconcile(_:unlisted:replacingExistingFiles:)`` finds its item again; a second
/// line saving to the same file is refused when it is read. The list itself is never held: a
/// small mark per line is (an internal ledger).
public struct DownloadList: Sendable {
    /// One download of the list.
    public struct Entry: Equatable, Sendable {
        /// The line it came from (1-based), for messages.
        public let line: Int
        /// What to fetch: an absolute `http` or `https` URL with a host.
        public let url: URL
        /// The expected SHA-256 (`sha256=`), lower-case hex.
        public let sha256: String?
        /// The output's file name: `out=`, or the URL's last path segment made safe
        /// (``FileNameSanitizer``).
        public let name: String
        /// Where the file is saved.
        public let destination: URL

        /// The queue item's id: a hash of the URL and the output file, so the same line finds its
        /// item again on every run, and a line that changes either is a new item.
        public var id: String {
            let key = url.absoluteString + "\n" + destination.path
            return "get-" + SHA256.hexString(SHA256.hash(Data(key.utf8))).prefix(32)
        }

        /// The queue item this line asks for, with its ``id``, split as `split` says.
        public func newItem(split: DownloadSplit = .off) -> DownloadQueue.NewItem {
            DownloadQueue.NewItem(url: url, to: destination, id: id, sha256: sha256, split: split)
        }
    }

    /// What is wrong with a line.
    public struct Mistake: Error, Equatable, Sendable, CustomStringConvertible {
        /// The line's number (1-based).
        public let line: Int
        /// Why it cannot be taken, in words (`'x' is not key=value (the keys are sha256 and out)`).
        public let reason: String

        /// `line N: reason`.
        public var description: String { "line \(line): \(reason)" }
    }

    /// Where the files are saved.
    public let directory: URL
    /// The lines taken so far.
    private var ledger = Ledger()

    /// A list whose files are saved in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// Lines taken so far (blank lines and comments not counted).
    public var count: Int { ledger.count }

    /// The download `line` asks for, or `nil` for a blank line or a comment; a mistake, or a line
    /// saving to the same file as an earlier one, is a ``Mistake``.
    public mutating func take(_ line: InputLineBuffer.Line) throws(Mistake) -> Entry? {
        guard let entry = try Self.parse(line, directory: directory) else { return nil }
        if let earlier = ledger.record(line: entry.line, destination: entry.destination, id: entry.id) {
            throw Mistake(
                line: entry.line, reason: "saves to \(entry.name), as line \(earlier) does; give one of them another out=<name>")
        }
        return entry
    }

    /// Whether a line taken so far is `item` (the same output file, the same id): what
    /// ``DownloadQueue/UnlistedItems/pauseUnless(listedEarlier:)`` asks once the list has ended.
    public func lists(_ item: DownloadQueue.Item) -> Bool {
        ledger.lists(item)
    }

    /// Parses one line (without the duplicate check) for files saved in `directory`.
    public static func parse(_ line: InputLineBuffer.Line, directory: URL) throws(Mistake) -> Entry? {
        let number = line.number
        let fail = { (why: String) in Mistake(line: number, reason: why) }
        guard let text = String(validating: line.bytes, as: UTF8.self) else { throw fail("is not UTF-8 text") }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let url = Self.url(fields[0]) else { throw fail("'\(fields[0])' is not an http:// or https:// URL") }
        var sha256: String?
        var out: String?
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else {
                throw fail("'\(field)' is not key=value (the keys are sha256 and out)")
            }
            let key = String(field[..<equals])
            let value = String(field[field.index(after: equals)...])
            switch key {
            case "sha256":
                guard sha256 == nil else { throw fail("sha256= is given twice") }
                guard DownloadPolicy.sha256(hex: value) != nil else {
                    throw fail("sha256= takes 64 hexadecimal digits, not '\(value)'")
                }
                sha256 = value.lowercased()
            case "out":
                guard out == nil else { throw fail("out= is given twice") }
                guard isPlainName(value) else {
                    throw fail("out= takes a plain file name (no '/', not '.' or '..'), not '\(value)'; -P sets the directory")
                }
                out = value
            default:
                throw fail("unknown key '\(key)=' (the keys are sha256 and out)")
            }
        }
        let name = out ?? FileNameSanitizer.suggestedName(for: url, contentDisposition: nil)
        let destination = directory.appendingPathComponent(name).standardizedFileURL
        return Entry(line: number, url: url, sha256: sha256, name: name, destination: destination)
    }

    /// `text` as a URL a list may name: absolute, `http` or `https`, with a host; `nil` otherwise.
    public static func url(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }

    /// A name that stays in the output directory.
    public static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
            && name.utf8.count <= 255
    }
}
