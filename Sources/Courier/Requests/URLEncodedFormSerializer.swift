import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as `application/x-www-form-urlencoded`, into the URL query or the body.
///
/// Escaping follows RFC 3986: only unreserved characters (`A–Z a–z 0–9 - . _ ~`) stay literal;
/// every other byte of the UTF-8 text is written as `%XX` (upper-case hex), so a space is `%20`
/// and `+`, `&`, `=` are always escaped. That applies to keys too, including the brackets that
/// nesting adds: `a[b]=1` goes out as `a%5Bb%5D=1`, which servers decode back to `a[b]`.
///
/// Nested dictionaries become `a[b][c]=x`; arrays follow ``arrayEncoding``, and a dictionary
/// inside an array becomes `a[][k]=v` (or `a[0][k]=v`). Keys are sorted at every level, so the
/// output is deterministic. `NSNull` and `nil` become a key with an empty value (`a=`); empty
/// arrays and dictionaries produce nothing.
public struct URLEncodedFormSerializer: RequestSerializer {
    /// Where the encoded parameters go.
    public enum Destination: Sendable {
        /// The query for `GET`, `HEAD` and `DELETE` (any case), the body for every other method.
        case methodDependent
        /// Always the URL query, appended to any query already there.
        case queryString
        /// Always the body.
        case httpBody
    }

    /// How array elements are keyed. Choose by the server: the two conventions do not mix, and a
    /// server of the other one does not fail, it drops the values without a word.
    public enum ArrayEncoding: Sendable {
        /// `a[]=1&a[]=2`, as Rails, PHP and AFNetworking expect. FastAPI, Flask, Django, Go's
        /// `net/url` and Spring read a key named `a[]`, not `a`: the list arrives empty (or the
        /// parameter missing) with no error. Use ``noBrackets`` (``repeatedKeys``) for them.
        case brackets
        /// `a=1&a=2`: what FastAPI, Flask, Django, Go and Spring read as a list.
        case noBrackets
        /// `a[0]=1&a[1]=2`.
        case indexInBrackets
    }

    /// How keys are written (every level's: `a[b]` converts `a` and `b`).
    public enum KeyEncoding: Sendable {
        /// As given.
        case useDefaultKeys
        /// `pageSize` → `page_size`, `userID` → `user_id`, `myURLValue` → `my_url_value`: words
        /// split where a lower-case letter or digit meets an upper-case one, and before the last
        /// capital of a run followed by a lower-case letter; leading and trailing `_` kept. So
        /// `tagIDs` becomes `tag_i_ds`: spell such a key `tagIds`, or use ``custom(_:)``.
        case convertToSnakeCase
        /// Your own text for each key (it is percent-encoded afterwards).
        case custom(@Sendable (String) -> String)

        /// The key as written.
        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: return key
            case .convertToSnakeCase: return Self.snakeCase(key)
            case .custom(let convert): return convert(key)
            }
        }

        static func snakeCase(_ key: String) -> String {
            let characters = Array(key)
            var result = ""
            for (index, character) in characters.enumerated() {
                if character.isUppercase, index > 0 {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    let wordStarts =
                        previous.isLowercase || previous.isNumber
                        || (previous.isUppercase && next.map { $0.isLowercase } == true)
                    if wordStarts, previous != "_" { result.append("_") }
                }
                result.append(contentsOf: character.lowercased())
            }
            return result
        }
    }

    /// How booleans are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// How dates are written.
    public enum DateEncoding: Sendable {
        /// RFC 3339 internet date-time in UTC, whole seconds: `2023-11-14T22:13:20Z` (the same
        /// text as `JSONEncoder.DateEncodingStrategy.iso8601`).
        case iso8601
        /// Seconds since 1970; whole numbers without a fraction (`1700000000`), else as Swift
        /// prints a `Double` (`1700000000.5`).
        case secondsSince1970
        /// Milliseconds since 1970, written like ``secondsSince1970``.
        case millisecondsSince1970
        /// Your own text for each date (it is percent-encoded afterwards).
        case custom(@Sendable (Date) -> String)

        /// The text for `date`.
        func string(from date: Date) -> String {
            switch self {
            case .iso8601: return date.formatted(.iso8601)
            case .secondsSince1970: return Self.number(date.timeIntervalSince1970)
            case .millisecondsSince1970: return Self.number(date.timeIntervalSince1970 * 1000)
            case .custom(let format): return format(date)
            }
        }

        /// `value` without a trailing `.0` when it is whole: timestamps are usually integers.
        private static func number(_ value: Double) -> String {
            if value.rounded() == value, let whole = Int64(exactly: value) { return String(whole) }
            return String(describing: value)
        }
    }

    /// Where the parameters go; by default it depends on the method.
    public var destination: Destination
    /// How array elements are keyed.
    public var arrayEncoding: ArrayEncoding
    /// How keys are written (`.convertToSnakeCase` for an API whose parameters are `page_size`
    /// while the Swift side says `pageSize`).
    public var keyEncoding: KeyEncoding
    /// How booleans are written.
    public var boolEncoding: BoolEncoding
    /// How dates are written.
    public var dateEncoding: DateEncoding

    /// Creates a serializer.
    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric, dateEncoding: DateEncoding = .iso8601,
        keyEncoding: KeyEncoding = .useDefaultKeys
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.keyEncoding = keyEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
    }

    /// Method-dependent destination, `a[]` arrays, `1`/`0` booleans, ISO 8601 dates.
    public static let `default` = URLEncodedFormSerializer()
    /// Like ``default``, but arrays as repeated keys (`a=1&a=2`): for FastAPI, Flask, Django, Go
    /// and Spring, which drop `a[]=` keys without a word.
    public static let repeatedKeys = URLEncodedFormSerializer(arrayEncoding: .noBrackets)

    /// Returns `request` with `parameters` in its query or body (see ``destination``).
    ///
    /// In the query, the parameters are appended after any query already there, and an empty
    /// set of parameters changes nothing. In the body, they replace `httpBody` (empty
    /// parameters give an empty body), and `Content-Type` becomes
    /// `application/x-www-form-urlencoded; charset=utf-8` unless the request already has one.
    /// `nil` parameters return `request` unchanged.
    public func serialize(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest {
        guard let parameters else { return request }
        return try apply(encode(parameters), to: request)
    }

    /// Encodes an Encodable value (a struct/dictionary at top level) the same way.
    ///
    /// The value goes through `JSONEncoder` and `JSONSerialization`, so its `Encodable`
    /// conformance decides the keys (`nil` optionals are usually left out), `Data` becomes
    /// base64, and booleans stay booleans. `Date` values are written by ``dateEncoding``, exactly
    /// as `Date` parameters are.
    public func serialize<Value: Encodable>(_ request: URLRequest, encoding value: Value) throws -> URLRequest {
        try apply(encoded(Self.tree(of: value, dateEncoding: dateEncoding)), to: request)
    }

    /// The percent-encoded `key=value&…` string, keys sorted (deterministic), nested as configured.
    ///
    /// Throws ``CourierError/Code-swift.struct/invalidRequest`` naming the key of a value of
    /// an unsupported type.
    public func encode(_ parameters: Parameters) throws -> String {
        try encoded(ParameterValue.dictionary(parameters))
    }

    // MARK: - Encoding

    /// `key=value` pairs of a classified top-level dictionary, joined with `&`.
    func encoded(_ root: ParameterValue) -> String {
        var pairs: [String] = []
        if case .dictionary(let members) = root {
            // Top-level keys are used as they are; only nested ones get brackets.
            for (key, member) in keyed(members) { append(member, key: key, to: &pairs) }
        }
        return pairs.joined(separator: "&")
    }

    /// `members` with their keys written by ``keyEncoding``, sorted by the written key (the output
    /// stays deterministic).
    private func keyed(_ members: [(key: String, value: ParameterValue)]) -> [(key: String, value: ParameterValue)] {
        guard case .useDefaultKeys = keyEncoding else {
            return members.map { (key: keyEncoding.encode($0.key), value: $0.value) }.sorted { $0.key < $1.key }
        }
        return members
    }

    private func append(_ value: ParameterValue, key: String, to pairs: inout [String]) {
        switch value {
        case .dictionary(let members):
            for (name, member) in keyed(members) { append(member, key: "\(key)[\(name)]", to: &pairs) }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                switch arrayEncoding {
                case .brackets: append(element, key: key + "[]", to: &pairs)
                case .noBrackets: append(element, key: key, to: &pairs)
                case .indexInBrackets: append(element, key: "\(key)[\(index)]", to: &pairs)
                }
            }
        case .null: pairs.append(Self.percentEncoded(key) + "=")
        case .text(let text): pairs.append(Self.percentEncoded(key) + "=" + Self.percentEncoded(text))
        case .bool(let bool):
            let text =
                switch boolEncoding {
                case .numeric: bool ? "1" : "0"
                case .literal: bool ? "true" : "false"
                }
            pairs.append(Self.percentEncoded(key) + "=" + text)
        case .date(let date): pairs.append(Self.percentEncoded(key) + "=" + Self.percentEncoded(dateEncoding.string(from: date)))
        }
    }

    /// `text` with every byte but the RFC 3986 unreserved ones written as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The classified tree of an `Encodable` value, via `JSONEncoder` and `JSONSerialization`.
    static func tree<Value: Encodable>(of value: Value, dateEncoding: DateEncoding) throws -> ParameterValue {
        let encoder = JSONEncoder()
        // Dates become the very text a `Date` parameter would, whatever the date encoding.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(dateEncoding.string(from: date))
        }
        return try tree(of: value, encoder: encoder)
    }

    /// The classified tree of an `Encodable` value written by `encoder` (its key and date
    /// strategies apply), read back with `JSONSerialization`.
    static func tree<Value: Encodable>(of value: Value, encoder: JSONEncoder) throws -> ParameterValue {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: encoder.encode(value), options: [.fragmentsAllowed])
        } catch {
            throw CourierError(
                code: .invalidRequest, message: "the \(Value.self) value could not be encoded as form parameters: \(error)",
                underlyingError: error)
        }
        guard let dictionary = object as? [String: Any] else {
            throw CourierError(
                code: .invalidRequest,
                message:
                    "a \(Value.self) value encodes as \(type(of: object)), not as keyed members; form parameters need a struct or dictionary at the top level"
            )
        }
        return try ParameterValue.dictionary(dictionary)
    }

    // MARK: - Placing

    /// `request` with `encoded` (already percent-encoded pairs) in its query or body, as
    /// ``destination`` says.
    func apply(_ encoded: String, to request: URLRequest) throws -> URLRequest {
        var request = request
        if usesQuery(for: request) {
            guard !encoded.isEmpty else { return request }
            guard let url = request.url else {
                throw CourierError(code: .invalidRequest, message: "the request has no URL to add query parameters to")
            }
            request.url = try Self.url(url, appendingQuery: encoded)
        } else {
            request.httpBody = Data(encoded.utf8)
            Self.setContentType("application/x-www-form-urlencoded; charset=utf-8", ifMissingIn: &request)
        }
        return request
    }

    private func usesQuery(for request: URLRequest) -> Bool {
        switch destination {
        case .queryString: return true
        case .httpBody: return false
        case .methodDependent: return Self.encodesParametersInQuery(request)
        }
    }

    /// Whether `request`'s method is `GET`, `HEAD` or `DELETE` (any case; no method means `GET`):
    /// the methods whose parameters go into the URL query, as AFNetworking's
    /// `HTTPMethodsEncodingParametersInURI`. Shared with ``JSONRequestSerializer``.
    static func encodesParametersInQuery(_ request: URLRequest) -> Bool {
        let method = HTTPMethod(rawValue: (request.httpMethod ?? "GET").uppercased())
        return [HTTPMethod.get, .head, .delete].contains(method)
    }

    /// `url` with `query` (already percent-encoded) after whatever query it has.
    static func url(_ url: URL, appendingQuery query: String) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw CourierError(code: .invalidRequest, message: "the URL cannot be split into components", url: url)
        }
        switch components.percentEncodedQuery {
        case nil, "": components.percentEncodedQuery = query
        case let existing? where existing.hasSuffix("&"): components.percentEncodedQuery = existing + query
        case let existing?: components.percentEncodedQuery = existing + "&" + query
        }
        guard let result = components.url(relativeTo: url.baseURL) else {
            throw CourierError(code: .invalidRequest, message: "the URL with the query added is not valid", url: url)
        }
        return result
    }
}
