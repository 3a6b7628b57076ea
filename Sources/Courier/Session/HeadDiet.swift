internal import CCourierPlatformFixes
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response users see, built back from the whole head when the kit withheld header lines of
/// it from FoundationNetworking (Sources/CCourierPlatformFixes/HeadDiet.c, Docs/Platform.md §6.18).
///
/// On a diet session FoundationNetworking gets only the lines of a 2xx head it acts on, plus one
/// `X-Courier-Head` field whose value is this process's key and then every header line of the
/// head, each after a line feed. The response is rebuilt from those lines with FoundationNetworking's
/// own rules (`_HTTPMessage._Header.createOne`, `headersAsDictionary`) and its own initializer,
/// so values, duplicates, case and folding come out as they would without the diet.
enum HeadDiet {
    /// The field the kit adds (COURIER_HEAD_DIET_FIELD).
    static let field = "X-Courier-Head"

    /// The key every carried head begins with in this process.
    static let key: String = String(cString: courier_head_diet_key())

    /// Makes the URLSession `make` returns a diet session when `enabled` (its multi handle is
    /// made in its initializer, on this thread); `true` when the kit confirms it.
    static func makeSession(enabled: Bool, _ make: () -> URLSession) -> (session: URLSession, isDiet: Bool) {
        guard enabled else { return (make(), false) }
        courier_head_diet_bind_begin()
        let session = make()
        return (session, courier_head_diet_bind_end() == 1)
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
        guard let keyRange = value.range(of: key) else { return nil }
        var lines = value[keyRange.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty, lines.removeFirst().isEmpty else { return nil }
        var result: [String: String] = [:]
        var index = 0
        while index < lines.count {
            guard let (name, value, next) = field(in: lines, at: index) else { return nil }
            if let earlier = result[name] {
                result[name] = earlier + ", " + value
            } else {
                result[name] = value
            }
            index = next
        }
        return result
    }

    /// One field starting at `lines[index]` with its folded continuations, read as
    /// FoundationNetworking 6.3.1 reads it; `next` is the index after it.
    private static func field(in lines: [Substring], at index: Int) -> (name: String, value: String, next: Int)? {
        let head = lines[index].unicodeScalars
        var nameEnd = head.startIndex
        while nameEnd != head.endIndex, isToken(head[nameEnd]) { nameEnd = head.index(after: nameEnd) }
        guard nameEnd != head.startIndex, nameEnd != head.endIndex, head[nameEnd] == ":" else { return nil }
        let rest = head[head.index(after: nameEnd)...]
        var value: String?
        if let first = rest.first {
            if isBlank(first), rest.count == 1 {
                value = ""
            } else {
                guard let trimmed = trimmingBlanks(rest) else { return nil }
                value = String(trimmed)
            }
        }
        var next = index + 1
        while next < lines.count, let first = lines[next].unicodeScalars.first, isBlank(first) {
            guard let part = trimmingBlanks(lines[next].unicodeScalars[...]) else { return nil }
            value = value.map { $0 + " " + String(part) } ?? String(part)
            next += 1
        }
        return (String(head[..<nameEnd]), value ?? "", next)
    }

    /// The scalars after leading blanks; `nil` when there are none or nothing follows them
    /// (FoundationNetworking's `trimSPHTPrefix`).
    private static func trimmingBlanks(_ scalars: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView? {
        guard let first = scalars.firstIndex(where: { !isBlank($0) }), first != scalars.startIndex else { return nil }
        return scalars[first...]
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }

    /// RFC 2616's token characters, as FoundationNetworking tests them.
    private static func isToken(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 32, scalar.value <= 126 else { return false }
        return !"()<>@,;:\\\"/[]?={} \t".unicodeScalars.contains(scalar)
    }
}
