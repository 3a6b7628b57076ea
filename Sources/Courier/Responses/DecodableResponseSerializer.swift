import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Decodable` type that an allowed empty body (204, 205, HEAD) decodes to.
public protocol EmptyDecodable: Decodable, Sendable {
    /// The value standing for "no content".
    static var emptyValue: Self { get }
}

/// A value for endpoints that answer with no content: `decodable(Empty.self)`.
public struct Empty: EmptyDecodable, Equatable {
    /// The empty value.
    public static let emptyValue = Empty()
    /// Creates the empty value.
    public init() {}
}

/// Decodes the body with a `JSONDecoder`.
public struct DecodableResponseSerializer<Value: Decodable & Sendable>: ResponseSerializer {
    /// The decoder used (configure dates, keys… on your own instance).
    public let decoder: JSONDecoder
    /// Which empty bodies are fine (they decode only for ``EmptyDecodable`` types).
    public var emptyResponsePolicy: EmptyResponsePolicy

    /// Creates the serializer.
    public init(
        _ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
        emptyResponsePolicy: EmptyResponsePolicy = .standard
    ) {
        self.decoder = decoder
        self.emptyResponsePolicy = emptyResponsePolicy
    }

    /// The decoded value.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Value {
        if data.isEmpty {
            guard emptyResponsePolicy.allowsEmptyBody(request: request, response: response) else {
                throw emptyResponsePolicy.emptyError(request: request, response: response)
            }
            guard let emptyType = Value.self as? any EmptyDecodable.Type, let empty = emptyType.emptyValue as? Value else {
                throw CourierError(
                    code: .emptyResponse,
                    message: "the body is empty and \(Value.self) has no empty value (conform it to EmptyDecodable, or decode Empty)",
                    url: request?.url, response: response)
            }
            return empty
        }
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw CourierError(
                code: .decodingFailed, message: "the body could not be decoded as \(Value.self): \(error)",
                url: request?.url, response: response, body: data, underlyingError: error)
        }
    }
}

extension ResponseSerializer {
    /// The body decoded as `type` with `decoder`.
    public static func decodable<T: Decodable & Sendable>(
        _ type: T.Type, decoder: JSONDecoder = JSONDecoder()
    )
        -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T>
    {
        DecodableResponseSerializer(type, decoder: decoder)
    }
}
