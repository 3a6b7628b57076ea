import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A JSON document as `JSONSerialization` produced it.
///
/// `JSONSerialization` returns `Any`, which cannot cross threads in Swift 6; this wrapper can.
public struct JSONValue: @unchecked Sendable {  // safe: immutable JSONSerialization output, see below
    // @unchecked: `value` holds only what JSONSerialization creates (Swift dictionaries, arrays
    // and strings, NSNumber, NSNull), all immutable or value types, and it is never mutated.
    /// The parsed object: `[String: Any]`, `[Any]`, `String`, `NSNumber`/`Bool`/`Int`/`Double`, or `NSNull`.
    public let value: Any

    init(_ value: Any) { self.value = value }

    /// The value as a dictionary, if it is one.
    public var dictionary: [String: Any]? { value as? [String: Any] }
    /// The value as an array, if it is one.
    public var array: [Any]? { value as? [Any] }
    /// The member `key` of an object, wrapped; `nil` when absent or not an object.
    public subscript(key: String) -> JSONValue? { dictionary?[key].map(JSONValue.init) }
    /// The element at `index` of an array, wrapped; `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard let array, array.indices.contains(index) else { return nil }
        return JSONValue(array[index])
    }
    /// The value as a string, if it is one.
    public var string: String? { value as? String }
    /// The value as an integer, if it is a number.
    public var int: Int? { (value as? NSNumber)?.intValue ?? value as? Int }
    /// The value as a boolean, if it is one.
    public var bool: Bool? { value as? Bool }
    /// Whether the value is JSON `null`.
    public var isNull: Bool { value is NSNull }
}

/// Parses the body with `JSONSerialization`.
///
/// With ``removesKeysWithNullValues`` (AFNetworking's `removesKeysWithNullValues`), object members
/// whose value is `null` are dropped, at every depth, including inside arrays. An allowed empty
/// body (204, 205, HEAD) yields JSON `null`.
public struct JSONResponseSerializer: ResponseSerializer {
    /// Options passed to `JSONSerialization`.
    public var readingOptions: JSONSerialization.ReadingOptions
    /// Drop object members whose value is `null`.
    public var removesKeysWithNullValues: Bool
    /// Which empty bodies are fine.
    public var emptyResponsePolicy: EmptyResponsePolicy

    /// Creates the serializer.
    public init(
        readingOptions: JSONSerialization.ReadingOptions = [.fragmentsAllowed],
        removesKeysWithNullValues: Bool = false, emptyResponsePolicy: EmptyResponsePolicy = .standard
    ) {
        self.readingOptions = readingOptions
        self.removesKeysWithNullValues = removesKeysWithNullValues
        self.emptyResponsePolicy = emptyResponsePolicy
    }

    /// The parsed document.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> JSONValue {
        if data.isEmpty {
            guard emptyResponsePolicy.allowsEmptyBody(request: request, response: response) else {
                throw emptyResponsePolicy.emptyError(request: request, response: response)
            }
            return JSONValue(NSNull())
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch {
            throw CourierError(
                code: .decodingFailed, message: "the body is not valid JSON", url: request?.url, response: response,
                body: data, underlyingError: error)
        }
        return JSONValue(removesKeysWithNullValues ? Self.removingNulls(from: object) : object)
    }

    /// `object` with every `null` object member removed, recursively.
    static func removingNulls(from object: Any) -> Any {
        if let dictionary = object as? [String: Any] {
            var cleaned: [String: Any] = [:]
            for (key, value) in dictionary where !(value is NSNull) {
                cleaned[key] = removingNulls(from: value)
            }
            return cleaned
        }
        if let array = object as? [Any] {
            return array.map { removingNulls(from: $0) }
        }
        return object
    }
}

extension ResponseSerializer where Self == JSONResponseSerializer {
    /// The body parsed with `JSONSerialization`.
    public static var json: JSONResponseSerializer { JSONResponseSerializer() }
    /// The body parsed with `JSONSerialization`, optionally dropping `null` members.
    public static func json(removesKeysWithNullValues: Bool) -> JSONResponseSerializer {
        JSONResponseSerializer(removesKeysWithNullValues: removesKeysWithNullValues)
    }
}
