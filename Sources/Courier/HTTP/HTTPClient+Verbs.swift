import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// GET / HEAD / POST / PUT / PATCH / DELETE, each started at once, with any response serializer
/// (`.data`, `.string`, `.json`, `.decodable(T.self)`, your own).
extension HTTPClient {
    /// GET `path`; parameters go into the query by default.
    @discardableResult
    public func get<Serializer: ResponseSerializer>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], serializer: Serializer,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .get, path, parameters: parameters, headers: headers, serializer: serializer, downloadProgress: progress, completion: completion
        )
    }

    /// HEAD `path`.
    @discardableResult
    public func head(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        completion: @escaping @Sendable (DataResponse<Data>) -> Void
    ) -> DataTask {
        task(.head, path, parameters: parameters, headers: headers, serializer: .data, completion: completion)
    }

    /// POST `path`; parameters go into the body by default.
    @discardableResult
    public func post<Serializer: ResponseSerializer>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], serializer: Serializer,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .post, path, parameters: parameters, headers: headers, serializer: serializer, uploadProgress: progress, completion: completion)
    }

    /// PUT `path`; parameters go into the body by default.
    @discardableResult
    public func put<Serializer: ResponseSerializer>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], serializer: Serializer,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(.put, path, parameters: parameters, headers: headers, serializer: serializer, uploadProgress: progress, completion: completion)
    }

    /// PATCH `path`; parameters go into the body by default.
    @discardableResult
    public func patch<Serializer: ResponseSerializer>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], serializer: Serializer,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .patch, path, parameters: parameters, headers: headers, serializer: serializer, uploadProgress: progress, completion: completion
        )
    }

    /// DELETE `path`; parameters go into the query by default.
    @discardableResult
    public func delete<Serializer: ResponseSerializer>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], serializer: Serializer,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(.delete, path, parameters: parameters, headers: headers, serializer: serializer, completion: completion)
    }

    // MARK: - async

    /// GET `path` and decode the body as `type`.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.get, path, parameters: parameters, headers: headers, serializer: .decodable(type)).value
    }

    /// HEAD `path` and return the response.
    public func head(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:]
    ) async throws(CourierError)
        -> HTTPURLResponse
    {
        try await send(.head, path, parameters: parameters, headers: headers, serializer: .data).http
    }

    /// POST `path` and decode the reply as `type`.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.post, path, parameters: parameters, headers: headers, serializer: .decodable(type)).value
    }

    /// PUT `path` and decode the reply as `type`.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.put, path, parameters: parameters, headers: headers, serializer: .decodable(type)).value
    }

    /// PATCH `path` and decode the reply as `type`.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.patch, path, parameters: parameters, headers: headers, serializer: .decodable(type)).value
    }

    /// DELETE `path` and decode the reply as `type` (use ``Empty`` for 204).
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.delete, path, parameters: parameters, headers: headers, serializer: .decodable(type)).value
    }
}

/// `Authorization` header values.
public enum HTTPAuthorization {
    /// `Basic <base64(user:password)>` (RFC 7617).
    public static func basic(user: String, password: String) -> String {
        Credential(user: user, password: password).basicAuthorization
    }

    /// `Bearer <token>` (RFC 6750).
    public static func bearer(_ token: String) -> String {
        "Bearer " + token
    }
}
