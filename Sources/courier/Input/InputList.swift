import Foundation
import Courier
import CourierSupport

extension GetCommand {
    /// The lines of an input file, `URL [sha256=<hex>] [out=<name>]`, one download each, taken one
    /// at a time as they are read: the list itself is never held (``InputLedger`` keeps what the
    /// duplicate check needs).
    struct InputList {
        /// One download.
        struct Entry: Equatable {
            /// The line it came from (1-based), for messages.
            let line: Int
            let url: URL
            /// The expected SHA-256, lower-case hex.
            let sha256: String?
            /// The output's file name (`out=`, or the URL's last path segment made safe).
            let name: String
            /// Where the file is saved.
            let destination: URL

            /// The queue item's id: a hash of the URL and the output file, so the same line finds
            /// its item again on every rerun, and a line that changes either is a new item.
            var id: String {
                let key = url.absoluteString + "\n" + destination.path
                return "get-" + SHA256.hexString(SHA256.hash(Data(key.utf8))).prefix(32)
            }
        }

        /// Where the files are saved.
        let directory: URL
        /// The input's name in messages (`stdin` or its path).
        let source: String
        /// The lines taken so far.
        private(set) var ledger = InputLedger()

        init(directory: URL, source: String) {
            self.directory = directory
            self.source = source
        }

        /// The download `line` asks for, or `nil` for a blank line or a comment; a mistake, or a
        /// line saving to the same file as an earlier one, is a usage error naming the line.
        mutating func take(_ line: InputLineBuffer.Line) throws(UsageError) -> Entry? {
            guard let entry = try Self.parse(line, directory: directory, source: source) else { return nil }
            if let earlier = ledger.record(line: entry.line, destination: entry.destination, id: entry.id) {
                throw UsageError(
                    get:
                        "\(source), line \(entry.line): saves to \(entry.name), as line \(earlier) does; give one of them another out=<name>"
                )
            }
            return entry
        }

        /// Parses one line (without the duplicate check) for files saved in `directory`.
        static func parse(_ line: InputLineBuffer.Line, directory: URL, source: String) throws(UsageError) -> Entry? {
            let number = line.number
            let fail = { (why: String) in UsageError(get: "\(source), line \(number): \(why)") }
            guard let text = String(validating: line.bytes, as: UTF8.self) else { throw fail("is not UTF-8 text") }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
            let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let url: URL
            do {
                url = try Options.url(fields[0])
            } catch {
                throw fail("'\(fields[0])' is not an http:// or https:// URL")
            }
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

        /// A name that stays in the output directory.
        static func isPlainName(_ name: String) -> Bool {
            !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
                && name.utf8.count <= 255
        }
    }
}
