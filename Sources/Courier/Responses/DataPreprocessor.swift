import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes a body before a serializer reads it: Alamofire's `DataPreprocessor`, for a
/// ``ResponseSerializer`` of any kind through ``ResponseSerializer/preprocessed(by:)``.
///
/// A preprocessor that throws fails the response as the serializer would
/// (``CourierError/Code-swift.struct/decodingFailed``, your error underneath). It runs where the
/// serializer runs: on the manager's processing queue.
public protocol DataPreprocessor: Sendable {
    /// The body the serializer reads instead of `data`.
    func preprocess(_ data: Data) throws -> Data
}

/// Strips the anti-XSSI prefix `)]}',` and the line break after it, which some JSON APIs (Google's)
/// put before every body so that a `<script>` tag cannot run it; any other body passes unchanged.
public struct XSSIPrefixPreprocessor: DataPreprocessor {
    /// The prefix removed.
    public static let prefix = Data(")]}',".utf8)

    /// Creates the preprocessor.
    public init() {}

    /// The body without the prefix and one following line break (`\n` or `\r\n`), if it has the prefix.
    public func preprocess(_ data: Data) throws -> Data {
        guard data.starts(with: Self.prefix) else { return data }
        var rest = data.dropFirst(Self.prefix.count)
        if rest.first == UInt8(ascii: "\r") { rest = rest.dropFirst() }
        if rest.first == UInt8(ascii: "\n") { rest = rest.dropFirst() }
        return Data(rest)
    }
}

/// A serializer that reads its body through a ``DataPreprocessor`` (``ResponseSerializer/preprocessed(by:)``).
public struct PreprocessedSerializer<Base: ResponseSerializer, Preprocessor: DataPreprocessor>: ResponseSerializer {
    /// The serializer that reads the preprocessed body.
    public let base: Base
    /// What changes the body first.
    public let preprocessor: Preprocessor

    /// Wraps `base` so that it reads what `preprocessor` makes of each body.
    public init(_ base: Base, preprocessor: Preprocessor) {
        self.base = base
        self.preprocessor = preprocessor
    }

    /// The base serializer's value for the preprocessed body.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Base.Value {
        try base.serialize(request: request, response: response, data: preprocessor.preprocess(data))
    }

    /// Always on the processing queue: preprocessing is work, whatever the base serializer is.
    public var needsProcessingQueue: Bool { true }
}

extension ResponseSerializer {
    /// This serializer reading each body through `preprocessor` first (Alamofire's
    /// `dataPreprocessor:` parameter): `DecodableResponseSerializer(Item.self).preprocessed(by: XSSIPrefixPreprocessor())`.
    public func preprocessed<Preprocessor: DataPreprocessor>(by preprocessor: Preprocessor) -> PreprocessedSerializer<Self, Preprocessor> {
        PreprocessedSerializer(self, preprocessor: preprocessor)
    }
}
