import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StreamSink {
    /// What a response head says about its body, read by the download path's own rules
    /// (the proof a downloaded body is complete, and its choice of validator), so a streamed body is
    /// judged exactly as a downloaded one.
    public struct Facts: Equatable, Sendable {
        /// `Content-Length` of an unencoded body (an encoded one's counts the compressed bytes).
        public let length: Int64?
        /// A strong `ETag`, else `Last-Modified`, of an unencoded body: what proves that a later
        /// response carries the same bytes. `nil` when there is none.
        public let validator: String?
        /// Why nothing can prove the body complete, if nothing can.
        public let unverifiableReason: String?

        /// The facts of `response`'s head.
        public init(_ response: HTTPURLResponse) {
            let announced: Int64?
            if case .length(let value) = ContentLength.parse(response.value(forHTTPHeaderField: "Content-Length")) {
                announced = value
            } else {
                announced = nil
            }
            length = BodyFacts.isEncoded(response) ? nil : announced
            validator = BodyFacts.isEncoded(response) ? nil : BodyFacts.strongValidator(of: response)
            unverifiableReason = BodyFacts.unverifiableReason(
                response, contentLength: announced, appendsRange: false, totalKnown: false, method: "GET")
        }
    }

    /// How far a sink has got, kept in its record file so that a process that dies can be
    /// followed by one that continues exactly after the bytes already written.
    ///
    /// A pipe cannot be asked what it received, so the sink says it before and after every write:
    /// ``writing`` holds the size of a write under way, ``written`` what is certainly out. A
    /// process that dies between the two leaves `writing > 0`: somewhere between `written` and
    /// `written + writing` bytes went out, and no restart can continue a pipe exactly.
    public struct Record: Equatable, Sendable {
        /// Bytes certainly written.
        public var written: Int64
        /// The size of the write under way, 0 between writes.
        public var writing: Int64
        /// The response's validator (``Facts/validator``); `nil` when there was none.
        public var validator: String?
        /// The body's announced length (``Facts/length``), if any.
        public var length: Int64?

        /// A record of `written` bytes out and `writing` more under way, for a body with `validator` and `length`.
        public init(written: Int64 = 0, writing: Int64 = 0, validator: String?, length: Int64?) {
            self.written = written
            self.writing = writing
            self.validator = validator
            self.length = length
        }

        /// Whether a new process can continue exactly after these bytes: nothing went out, or
        /// no write was under way and the body had a validator to prove the next one the same.
        public var isContinuable: Bool {
            (written == 0 && writing == 0) || (writing == 0 && validator != nil)
        }

        /// The record at `file`, if there is a readable one: read as the library reads its side
        /// files (never through a link, never blocking on a FIFO, never a large file).
        public static func read(from file: URL) -> Record? {
            guard let data = SideFile.contents(of: file, limit: 64 * 1024), let text = String(data: data, encoding: .utf8) else {
                return nil
            }
            return Record(text: text)
        }

        // MARK: - Format

        /// The first line has a fixed width, so each update is one `pwrite` over the same bytes:
        /// a process that dies leaves either the old line or the new one, never a mix of lengths.
        static func progressLine(written: Int64, writing: Int64) -> String {
            "written \(digits(written)) writing \(digits(writing))\n"
        }

        private static func digits(_ value: Int64) -> String {
            let text = String(max(value, 0))
            return String(repeating: "0", count: max(0, 19 - text.count)) + text
        }

        /// The whole record: the progress line, then the facts, which do not change while the
        /// file lives (a restarted process checks that the new response matches them).
        var text: String {
            var text = Self.progressLine(written: written, writing: writing)
            text += "length " + (length.map(String.init) ?? "-") + "\n"
            if let validator { text += "validator " + validator + "\n" }
            return text
        }

        /// Parses ``text``; `nil` when it is not a record.
        init?(text: String) {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 2 else { return nil }
            let progress = lines[0].split(separator: " ")
            guard progress.count == 4, progress[0] == "written", progress[2] == "writing",
                let written = Int64(progress[1]), let writing = Int64(progress[3]), written >= 0, writing >= 0,
                lines[1].hasPrefix("length ")
            else { return nil }
            self.init(written: written, writing: writing, validator: nil, length: nil)
            let length = lines[1].dropFirst("length ".count)
            if length != "-" {
                guard let value = Int64(length), value >= 0 else { return nil }
                self.length = value
            }
            if lines.count > 2, lines[2].hasPrefix("validator ") { validator = String(lines[2].dropFirst("validator ".count)) }
        }
    }
}
