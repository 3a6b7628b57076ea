import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls whose body is an `Encodable` value, written as JSON by an encoder of your choice
/// (`api.post("invoices", body: invoice, as: Invoice.self)`).
///
/// A `body:` is always the request body, whatever the client's ``HTTPClient/parameterEncoding``:
/// the verbs are POST, PUT and PATCH, and the general forms take any method that may carry a body
/// (a `DELETE` with a body is sent as asked). A `GET` or `HEAD` with a body is refused as
/// ``CourierError/Code-swift.struct/invalidRequest`` before anything is sent (FoundationNetworking
/// fails a GET with a body); put a GET's values in `parameters:`, or encode an `Encodable` into
/// the query with ``URLEncodedFormSerializer/serialize(_:encoding:)``.
extension HTTPClient {
    /// The request a `body:` call would send: URL resolved, headers merged, `body` encoded by
    /// `encoder` as the JSON body (`Content-Type: application/json` unless a header sets one),
    /// then checked like every request.
    public func request<Body: Encodable & Sendable>(
        _ method: HTTPMethod, _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(),
        headers: [String: String] = [:]
    ) throws(CourierError) -> URLRequest {
        let request = try JSONRequestSerializer.request(
            prepared(method, path, headers: headers), withBodyEncoding: body, encoder: encoder)
        try RequestValidation.validate(request)
        return request
    }

    /// A task for `method` and `path` sending `body` as JSON; see
    /// ``task(_:_:parameters:headers:parameterEncoding:serializer:validation:queue:startImmediately:uploadProgress:downloadProgress:completion:)``
    /// for the rest. A body that cannot be encoded completes the task at once with
    /// ``CourierError/Code-swift.struct/invalidRequest``, sending nothing.
    @discardableResult
    public func task<Body: Encodable & Sendable, Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(),
        headers: [String: String] = [:], serializer: Serializer, validation: Validation = .default,
        queue: CallbackQueue = .default, startImmediately: Bool = true, uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        start(
            Result { () throws(CourierError) in try request(method, path, body: body, encoder: encoder, headers: headers) },
            serializer: serializer, validation: validation, queue: queue, startImmediately: startImmediately,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completion)
    }

    /// The async form of ``task(_:_:body:encoder:headers:serializer:validation:queue:startImmediately:uploadProgress:downloadProgress:completion:)``.
    public func send<Body: Encodable & Sendable, Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(),
        headers: [String: String] = [:], serializer: Serializer, validation: Validation = .default
    ) async throws(CourierError) -> (value: Serializer.Value, http: HTTPURLResponse) {
        let request = try request(method, path, body: body, encoder: encoder, headers: headers)
        return try await perform(request, serializer: serializer, validation: validation)
    }

    // MARK: - Verbs

    /// POST `body` as JSON to `path`.
    @discardableResult
    public func post<Body: Encodable & Sendable, Serializer: ResponseSerializer>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        serializer: Serializer, progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .post, path, body: body, encoder: encoder, headers: headers, serializer: serializer, uploadProgress: progress,
            completion: completion)
    }

    /// PUT `body` as JSON to `path`.
    @discardableResult
    public func put<Body: Encodable & Sendable, Serializer: ResponseSerializer>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        serializer: Serializer, progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .put, path, body: body, encoder: encoder, headers: headers, serializer: serializer, uploadProgress: progress,
            completion: completion)
    }

    /// PATCH `body` as JSON to `path`.
    @discardableResult
    public func patch<Body: Encodable & Sendable, Serializer: ResponseSerializer>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        serializer: Serializer, progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        task(
            .patch, path, body: body, encoder: encoder, headers: headers, serializer: serializer, uploadProgress: progress,
            completion: completion)
    }

    /// POST `body` as JSON to `path` and decode the reply as `type`.
    public func post<Body: Encodable & Sendable, Value: Decodable & Sendable>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.post, path, body: body, encoder: encoder, headers: headers, serializer: .decodable(type)).value
    }

    /// PUT `body` as JSON to `path` and decode the reply as `type`.
    public func put<Body: Encodable & Sendable, Value: Decodable & Sendable>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.put, path, body: body, encoder: encoder, headers: headers, serializer: .decodable(type)).value
    }

    /// PATCH `body` as JSON to `path` and decode the reply as `type`.
    public func patch<Body: Encodable & Sendable, Value: Decodable & Sendable>(
        _ path: String, body: Body, encoder: JSONEncoder = JSONEncoder(), headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws(CourierError) -> Value {
        try await send(.patch, path, body: body, encoder: encoder, headers: headers, serializer: .decodable(type)).value
    }
}
