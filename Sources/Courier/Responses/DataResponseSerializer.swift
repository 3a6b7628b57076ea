import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Passes the body through as `Data` (empty only where ``EmptyResponsePolicy`` allows).
public struct DataResponseSerializer: ResponseSerializer {
    /// Which empty bodies are fine.
    public var emptyResponsePolicy: EmptyResponsePolicy

    /// Creates the serializer.
    public init(emptyResponsePolicy: EmptyResponsePolicy = .standard) {
        self.emptyResponsePolicy = emptyResponsePolicy
    }

    /// `false`: handing the body on is not work worth a thread hand-off.
    public var needsProcessingQueue: Bool { false }

    /// The body itself; no copy is made.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Data {
        if data.isEmpty, !emptyResponsePolicy.allowsEmptyBody(request: request, response: response) {
            throw emptyResponsePolicy.emptyError(request: request, response: response)
        }
        return data
    }
}

extension ResponseSerializer where Self == DataResponseSerializer {
    /// The body as `Data`.
    public static var data: DataResponseSerializer { DataResponseSerializer() }
    /// The body as `Data`, empty or not, whatever the status (Alamofire's `response { … }`):
    /// for calls whose answer is the status alone. Pair it with `validation: .none` to take every
    /// status too, as Alamofire does when nothing calls `validate()`.
    public static var dataOrEmpty: DataResponseSerializer { DataResponseSerializer(emptyResponsePolicy: .any) }
}
