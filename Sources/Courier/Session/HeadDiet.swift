internal import CCourierPlatformFixes
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response users see, built back from the whole head when the kit withheld header lines of
/// it from FoundationNetworking (Sources/CCourierPlatformFixes/HeadDiet.c, Docs/Platform.md §6.18).
///
/// For a request Courier marked (``marked(_:)``), FoundationNetworking gets only the lines of a 2xx head it acts on, plus one
/// `X-Courier-Head` field whose value is this process's key and then every header line of the
/// head, each after a line feed. The response is rebuilt from those lines with FoundationNetworking's
/// own rules (`_HTTPMessage._Header.createOne`, `headersAsDictionary`) and its own initializer,
/// so values, duplicates, case and folding come out as they would without the diet.
enum HeadDiet {
    /// The field the kit adds (COURIER_HEAD_DIET_FIELD).
    static let field = "X-Courier-Head"

    /// The key every carried head begins with in this process.
    static let key: String = String(cString: courier_head_diet_key())

    /// The request field that asks for the diet (COURIER_HEAD_DIET_REQUEST_FIELD). Its value is one
    /// space: FoundationNetworking writes it as `X-Courier-Diet:  `, which libcurl never sends.
    static let requestField = "X-Courier-Diet"

    /// Whether the kit can put heads on the diet in this process now (asked once per session: the
    /// kit is installed by the first manager, so the answer can change from false to true).
    static var isSupported: Bool { courier_head_diet_supported() != 0 }

    /// `request` with the mark that puts its 2xx heads on the diet. Only Courier's requests carry
    /// it: a task made on a manager's URLSession directly gets FoundationNetworking's whole head.
    static func marked(_ request: URLRequest) -> URLRequest {
        var request = request
        request.setValue(" ", forHTTPHeaderField: requestField)
        return request
    }

    /// `request` without the mark: what FoundationNetworking proposes for a redirect carries it
    /// (it copies the request it was given), and Courier's records never show it.
    static func unmarked(_ request: URLRequest) -> URLRequest {
        guard request.value(forHTTPHeaderField: requestField) != nil else { return request }
        var request = request
        request.setValue(nil, forHTTPHeaderField: requestField)
        return request
    }

    /// `response` itself, or, when it carries a head the kit cut down, the response built from the
    /// whole head.
    static func restored(_ response: URLResponse) -> URLResponse {
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode),
            let carried = http.allHeaderFields[field] as? String, let url = http.url,
            let fields = fields(carried: carried, key: key)
        else { return response }
        return HTTPURLResponse(url: url, statusCode: http.statusCode, httpVersion: nil, headerFields: fields) ?? response
    }

    /// The header fields of a carried head (`value` of the kit's field: possibly after a server's
    /// own value of that name and ", ", then `key`, then each line after a line feed), merged as
    /// FoundationNetworking merges them; `nil` when `key` is not in it or a line does not parse
    /// (FoundationNetworking refuses such a head).
    static func fields(carried value: String, key: String) -> [String: String]? {
        // Read as bytes: every delimiter is ASCII, and cutting valid UTF-8 at ASCII bytes leaves
        // valid UTF-8 (the String views cost ~200k instructions a head; Performance.md).
        var value = value
        value.makeContiguousUTF8()
        var key = key
        key.makeContiguousUTF8()
        return value.utf8.withContiguousStorageIfAvailable { bytes in
            key.utf8.withContiguousStorageIfAvailable { key in fields(bytes, key: key) } ?? nil
        } ?? nil
    }

    private static func fields(_ bytes: UnsafeBufferPointer<UInt8>, key: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        guard let keyEnd = end(of: key, in: bytes) else { return nil }
        // The key ends the line it is on: the head's lines follow, each after a line feed.
        guard keyEnd == bytes.count || bytes[keyEnd] == 0x0A else { return nil }
        var lines: [Range<Int>] = []
        var start = keyEnd + 1
        while start <= bytes.count, keyEnd < bytes.count {
            var stop = start
            while stop < bytes.count, bytes[stop] != 0x0A { stop += 1 }
            lines.append(start..<stop)
            start = stop + 1
        }
        var result: [String: String] = [:]
        var index = 0
        while index < lines.count {
            guard let (name, value, next) = field(bytes, lines, at: index) else { return nil }
            if let earlier = result[name] {
                result[name] = earlier + ", " + value
            } else {
                result[name] = value
            }
            index = next
        }
        return result
    }

    /// The index just after the first occurrence of `key` in `bytes` (at the start unless a
    /// server's own value comes first), or `nil`.
    private static func end(of key: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !key.isEmpty, bytes.count >= key.count else { return nil }
        var start = 0
        while start + key.count <= bytes.count {
            if bytes[start] == key[0], memcmp(bytes.baseAddress! + start, key.baseAddress!, key.count) == 0 {
                return start + key.count
            }
            start += 1
        }
        return nil
    }

    /// One field starting at `lines[index]` with its folded continuations, read as
    /// FoundationNetworking 6.3.1 reads it (`_HTTPMessage._Header.createOne`); `next` is the
    /// index after it.
    private static func field(
        _ bytes: UnsafeBufferPointer<UInt8>, _ lines: [Range<Int>], at index: Int
    ) -> (name: String, value: String, next: Int)? {
        let line = lines[index]
        var nameEnd = line.lowerBound
        while nameEnd < line.upperBound, isToken(bytes[nameEnd]) { nameEnd += 1 }
        guard nameEnd != line.lowerBound, nameEnd < line.upperBound, bytes[nameEnd] == UInt8(ascii: ":") else { return nil }
        let rest = nameEnd + 1..<line.upperBound
        var value: String?
        if !rest.isEmpty {
            if rest.count == 1, isBlank(bytes[rest.lowerBound]) {
                value = ""
            } else {
                guard let trimmed = trimmingBlanks(bytes, rest) else { return nil }
                value = string(bytes, trimmed)
            }
        }
        var next = index + 1
        while next < lines.count, !lines[next].isEmpty, isBlank(bytes[lines[next].lowerBound]) {
            guard let part = trimmingBlanks(bytes, lines[next]) else { return nil }
            let text = string(bytes, part)
            value = value.map { $0 + " " + text } ?? text
            next += 1
        }
        return (string(bytes, line.lowerBound..<nameEnd), value ?? "", next)
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The range after leading blanks; `nil` when there are none or nothing follows them
    /// (FoundationNetworking's `trimSPHTPrefix`).
    private static func trimmingBlanks(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        var start = range.lowerBound
        while start < range.upperBound, isBlank(bytes[start]) { start += 1 }
        guard start != range.lowerBound, start < range.upperBound else { return nil }
        return start..<range.upperBound
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// RFC 2616's token characters, as FoundationNetworking tests them: printable ASCII but
    /// `()<>@,;:\"/[]?={}`, space and tab.
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x41...0x5A, 0x5E...0x7A, 0x7C, 0x7E: true
        default: false
        }
    }
}
