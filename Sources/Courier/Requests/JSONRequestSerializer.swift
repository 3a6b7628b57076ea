import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body and sets `Content-Type: application/json` unless the
/// request already has a `Content-Type` — except for `GET`, `HEAD` and `DELETE`, whose parameters
/// go into the URL query, written by ``queryEncoding`` (as `AFJSONRequestSerializer` does).
///
/// The query rule is not a matter of taste on Linux: FoundationNetworking fails a GET that
/// carries a body (with -1103, "resource exceeds maximum size"), and Courier
/// refuses one before it is sent.
///
/// Body parameters are written by `JSONSerialization`, so values must be what it accepts:
/// strings, numbers, Bools, `NSNull`, arrays and dictionaries with string keys. Anything else
/// (a `Date`, a custom type, a non-finite number) is an
/// ``CourierError/Code-swift.struct/invalidRequest`` error naming the key; it never traps. For
/// other types, serialize an `Encodable` value. Query parameters follow
/// ``URLEncodedFormSerializer``'s rules (which also accept `Date`).
public struct JSONRequestSerializer: RequestSerializer {
    /// Options passed to `JSONSerialization`.
    public var writingOptions: JSONSerialization.WritingOptions
    /// How the parameters of a `GET`, `HEAD` or `DELETE` request are written into its URL query:
    /// this serializer's array, Bool and date encodings apply; its
    /// ``URLEncodedFormSerializer/destination`` is not used (always the query). Default
    /// ``URLEncodedFormSerializer/default``.
    public var queryEncoding: URLEncodedFormSerializer

    /// Creates a serializer; the default sorts keys so that the body is deterministic.
    public init(
        writingOptions: JSONSerialization.WritingOptions = [.sortedKeys],
        queryEncoding: URLEncodedFormSerializer = .default
    ) {
        self.writingOptions = writingOptions
        self.queryEncoding = queryEncoding
    }

    /// Sorted keys, compact output; `a[]` arrays, `1`/`0` booleans and ISO 8601 dates in queries.
    public static let `default` = JSONRequestSerializer()

    /// Returns `request` with `parameters` as its JSON body, or in its URL query for `GET`,
    /// `HEAD` and `DELETE` (any case); `nil` returns `request` unchanged.
    public func serialize(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest {
        guard let parameters else { return request }
        if URLEncodedFormSerializer.encodesParametersInQuery(request) {
            return try query.serialize(request, with: parameters)
        }
        let object: [String: Any] = parameters
        // JSONSerialization may trap on objects it cannot write (an exception on Darwin):
        // check first, then say which member is at fault.
        guard JSONSerialization.isValidJSONObject(object) else {
            let culprit = object.sorted { $0.key < $1.key }.first { !JSONSerialization.isValidJSONObject([$0.key: $0.value]) }
            let detail = culprit.map { " the value of \"\($0.key)\" (\(type(of: $0.value))) is not" } ?? " they are not"
            throw CourierError(
                code: .invalidRequest,
                message:
                    "the parameters cannot be written as JSON:\(detail) a string, finite number, Bool, NSNull, array or dictionary with string keys",
                url: request.url)
        }
        let body: Data
        do {
            body = try JSONSerialization.data(withJSONObject: object, options: writingOptions)
        } catch {
            throw CourierError(
                code: .invalidRequest, message: "the parameters cannot be written as JSON: \(error)", url: request.url,
                underlyingError: error)
        }
        return Self.request(request, withBody: body)
    }

    /// Returns `request` with `value` encoded by `encoder` as its JSON body.
    ///
    /// For `GET`, `HEAD` and `DELETE` the value goes into the URL query instead: `encoder` writes
    /// it (its key and date strategies apply), then ``queryEncoding`` turns the members into
    /// pairs, so the top level must be keyed (a struct or a dictionary).
    public func serialize<Value: Encodable>(
        _ request: URLRequest, encoding value: Value, encoder: JSONEncoder = JSONEncoder()
    ) throws -> URLRequest {
        if URLEncodedFormSerializer.encodesParametersInQuery(request) {
            return try query.apply(query.encoded(URLEncodedFormSerializer.tree(of: value, encoder: encoder)), to: request)
        }
        return try Self.request(request, withBodyEncoding: value, encoder: encoder)
    }

    /// `request` with `value` encoded by `encoder` as its JSON body, whatever the method (the
    /// `body:` calls of ``HTTPClient``; a GET or HEAD body is refused before it is sent).
    static func request<Value: Encodable>(
        _ request: URLRequest, withBodyEncoding value: Value, encoder: JSONEncoder
    ) throws(CourierError) -> URLRequest {
        let body: Data
        do {
            body = try encoder.encode(value)
        } catch {
            throw CourierError(
                code: .invalidRequest, message: "the \(Value.self) value cannot be encoded as JSON: \(error)",
                url: request.url, underlyingError: error)
        }
        return Self.request(request, withBody: body)
    }

    /// ``queryEncoding``, always into the query.
    private var query: URLEncodedFormSerializer {
        var query = queryEncoding
        query.destination = .queryString
        return query
    }

    private static func request(_ request: URLRequest, withBody body: Data) -> URLRequest {
        var request = request
        request.httpBody = body
        setContentType("application/json", ifMissingIn: &request)
        return request
    }
}
