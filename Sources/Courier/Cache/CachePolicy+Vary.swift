import Foundation
internal import CourierSupport

extension CachePolicy {
    /// Request fields whose values are secrets: kept only as a SHA-256 when `Vary` names them.
    static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The lower-cased field names `Vary` lists, or `nil` for `Vary: *` (never reused, so never
    /// stored). Empty elements (`Vary: , *`) are skipped; every line counts.
    static func varyNames(_ headers: CacheHeaders) -> [String]? {
        let names = headers.listElements("Vary").map { ASCIICase.lowercased($0) }
        if names.contains("*") { return nil }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The request's values for `names`, normalised, to store beside the response: a secret
    /// field (``secretFields`` and `secrets`, lower case) only as the hex SHA-256 of its
    /// normalised value, so a stored entry never holds a credential or a cookie.
    static func varyValues(names: [String], request: CacheRequest, secrets: Set<String> = []) -> [CacheEntryHead.VaryValue] {
        names.map { name in
            guard let value = normalisedValue(name, in: request.headers) else { return .init(name: name, value: nil) }
            if secretFields.contains(name) || secrets.contains(name) {
                return .init(name: name, value: "sha256:" + SHA256.hexString(SHA256.hash(Data(value.utf8))))
            }
            return .init(name: name, value: value)
        }
    }

    /// Whether `head` was stored for a request that matches `request` on every field its `Vary`
    /// names (RFC 9111 §4.1): both absent, or equal once normalised.
    static func varyMatches(_ head: CacheEntryHead, request: CacheRequest, secrets: Set<String> = []) -> Bool {
        guard let names = varyNames(head.headers) else { return false }
        return varyValues(names: names, request: request, secrets: secrets) == head.vary.filter { names.contains($0.name) }
            && head.vary.count == names.count
    }

    /// A field's value in the form compared for `Vary`: every line combined, blanks around the
    /// list's commas removed; for the `Accept-*` fields (case-insensitive tokens whose order
    /// carries no meaning without weights) also lower-cased and sorted.
    static func normalisedValue(_ name: String, in headers: CacheHeaders) -> String? {
        let lines = headers.values(name)
        guard !lines.isEmpty else { return nil }
        var elements = lines.flatMap { CacheHeaders.splitList($0) }.map {
            $0.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ";")
        }
        if ["accept-language", "accept-encoding", "accept-charset"].contains(name) {
            elements = elements.map { $0.lowercased() }.sorted()
        }
        return elements.joined(separator: ",")
    }
}
