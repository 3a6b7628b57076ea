import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body and sets `Content-Type: application/json` unless the
/// request already has a `Content-Type`.
///
/// Parameters are written by `JSONSerialization`, so values must be what it accepts: strings,
/// numbers, Bools, `NSNull`, arrays and dictionaries with string keys. Anything else (a `Date`,
/// a custom type, a non-finite number) is an ``CourierError/Code-swift.struct/invalidRequest``
/// error naming the key; it never traps. For other types, serialize an `Encodable` value.
public struct JSONRequestSerializer: RequestSerializer {
    /// Options passed to `JSONSerialization`.
    public var writingOptions: JSONSerialization.WritingOptions

    /// Creates a serializer; the default sorts keys so that the body is deterministic.
    public init(writingOptions: JSONSerialization.WritingOptions = [.sortedKeys]) {
        self.writingOptions = writingOptions
    }

    /// Sorted keys, compact output.
    public static let `default` = JSONRequestSerializer()

    /// Returns `request` with `parameters` as its JSON body; `nil` returns `request` unchanged.
    public func serialize(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest {
        guard let parameters else { return request }
        let object: [String: Any] = parameters
        // JSONSerialization may trap on objects it cannot write (an exception on Darwin):
        // check first, then say which member is at fault.
        guard JSONSerialization.isValidJSONObject(object) else {
            let culprit = object.sorted { $0.key < $1.key }.first { !JSONSerialization.isValidJSONObject([$0.key: $0.value]) }
            let detail = culprit.map { " the value of \"\($0.key)\" (\(type(of: $0.value))) is not" } ?? " they are not"
            throw CourierError(
                code: .invalidRequest,
                message: "the parameters cannot be written as JSON:\(detail) a string, finite number, Bool, NSNull, array or dictionary with string keys",
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
    public func serialize<Value: Encodable>(
        _ request: URLRequest, encoding value: Value, encoder: JSONEncoder = JSONEncoder()
    ) throws -> URLRequest {
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

    private static func request(_ request: URLRequest, withBody body: Data) -> URLRequest {
        var request = request
        request.httpBody = body
        setContentType("application/json", ifMissingIn: &request)
        return request
    }
}
