import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP client for one service (AFNetworking's `AFHTTPSessionManager`): a base URL, headers
/// for every request, a parameter encoding, and GET / HEAD / POST / PUT / PATCH / DELETE
/// conveniences over a ``SessionManager``.
///
/// Paths resolve against ``baseURL`` by RFC 3986 §5.2 — exactly like a link in a web page, with
/// no slash added or removed. With `baseURL` `https://api.example.com/v2/`:
///
/// | path | request URL |
/// | --- | --- |
/// | `users` | `https://api.example.com/v2/users` |
/// | `users/7?full=1` | `https://api.example.com/v2/users/7?full=1` |
/// | `/health` | `https://api.example.com/health` (a leading slash replaces the whole path) |
/// | `../v1/users` | `https://api.example.com/v1/users` |
/// | `//cdn.example.com/x` | `https://cdn.example.com/x` (same scheme, other host) |
/// | `https://other.example/x` | `https://other.example/x` (absolute: the base is ignored) |
///
/// Mind the trailing slash: with `https://api.example.com/v2` (no slash) the last segment is a
/// "file", so `users` resolves to `https://api.example.com/users`.
public final class HTTPClient: Sendable {
    /// What relative paths resolve against; `nil` means every path must be an absolute URL.
    public let baseURL: URL?
    /// The manager that runs the tasks.
    public let manager: SessionManager
    /// Headers sent with every request (a call's own headers win).
    public let headers: [String: String]
    /// How parameters are encoded unless a call says otherwise (default: URL-encoded, in the
    /// query for GET/HEAD/DELETE and in the body otherwise).
    public let parameterEncoding: any RequestSerializer

    /// A client with its own manager.
    public convenience init(
        baseURL: URL?, configuration: SessionManager.Configuration = SessionManager.Configuration(),
        headers: [String: String] = [:], parameterEncoding: any RequestSerializer = URLEncodedFormSerializer.default
    ) {
        self.init(
            baseURL: baseURL, manager: SessionManager(configuration: configuration), headers: headers,
            parameterEncoding: parameterEncoding)
    }

    /// A client sharing `manager` (and so its connections) with other clients.
    public init(
        baseURL: URL?, manager: SessionManager, headers: [String: String] = [:],
        parameterEncoding: any RequestSerializer = URLEncodedFormSerializer.default
    ) {
        self.baseURL = baseURL
        self.manager = manager
        self.headers = headers
        self.parameterEncoding = parameterEncoding
    }

    /// `path` resolved against ``baseURL`` (RFC 3986 §5.2); ``CourierError/Code-swift.struct/invalidRequest``
    /// when the result has no scheme or host.
    public func url(for path: String) throws(CourierError) -> URL {
        guard let url = URL(string: path, relativeTo: baseURL)?.absoluteURL, url.scheme != nil, url.host != nil else {
            throw CourierError(
                code: .invalidRequest,
                message: "\"\(path)\" is not a URL\(baseURL.map { " relative to \($0.absoluteString)" } ?? " (and there is no base URL)")")
        }
        return url
    }

    /// The request a call would send: URL resolved, headers merged, parameters encoded, checked
    /// (a header with CR or LF, a URL that is not http or https, or a GET with a body is refused
    /// here). A serializer of your own that throws another error is reported as
    /// ``CourierError/Code-swift.struct/invalidRequest`` wrapping it.
    public func request(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        parameterEncoding: (any RequestSerializer)? = nil
    ) throws(CourierError) -> URLRequest {
        var request = try prepared(method, path, headers: headers)
        do {
            request = try (parameterEncoding ?? self.parameterEncoding).serialize(request, with: parameters)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                code: .invalidRequest, message: "the parameters could not be encoded: \(error)", url: request.url,
                underlyingError: error)
        }
        try RequestValidation.validate(request)
        return request
    }

    /// The request for `method` and `path` with the client's and the call's headers, before
    /// anything is encoded into it.
    func prepared(_ method: HTTPMethod, _ path: String, headers: [String: String]) throws(CourierError) -> URLRequest {
        var request = URLRequest(url: try url(for: path))
        request.httpMethod = method.rawValue
        var fields = request.allHTTPHeaderFields ?? [:]
        for (name, value) in self.headers.merging(headers, uniquingKeysWith: { _, call in call }) {
            // Set through the dictionary: `setValue` silently drops values with CR/LF on Linux,
            // which would hide the mistake instead of reporting it.
            fields[name] = value
        }
        request.allHTTPHeaderFields = fields
        return request
    }

    /// A task for `method` and `path`; the general form of the verb conveniences. It starts at
    /// once unless `startImmediately` is false — then set per-task options
    /// (``CourierTask/authenticate(with:)``, ``CourierTask/redirect(using:)``,
    /// ``CourierTask/intercept(with:)``) and call `resume()`.
    @discardableResult
    public func task<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        parameterEncoding: (any RequestSerializer)? = nil, serializer: Serializer, validation: Validation = .default,
        queue: CallbackQueue = .default, startImmediately: Bool = true, uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        start(
            Result { () throws(CourierError) in
                try request(method, path, parameters: parameters, headers: headers, parameterEncoding: parameterEncoding)
            },
            serializer: serializer, validation: validation, queue: queue, startImmediately: startImmediately,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completion)
    }

    /// A task for a request built (or refused) already: an upload task when it has a body, a data
    /// task otherwise; a refused request completes at once with its error, sending nothing.
    func start<Serializer: ResponseSerializer>(
        _ built: Result<URLRequest, CourierError>, serializer: Serializer, validation: Validation, queue: CallbackQueue,
        startImmediately: Bool, uploadProgress: (@Sendable (Progress) -> Void)?,
        downloadProgress: (@Sendable (Progress) -> Void)?,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        let problem: CourierError? = if case .failure(let error) = built { error } else { nil }
        // For a refused request, a placeholder the task never sends: it completes at once with the error.
        let built = (try? built.get()) ?? URLRequest(url: baseURL ?? URL(fileURLWithPath: "/"))
        let task: DataTask
        if let (upload, body) = Self.asUpload(built) {
            task = manager.uploadTask(
                with: upload, from: .data(body), serializer: serializer, validation: validation, queue: queue,
                uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completion)
        } else {
            task = manager.dataTask(
                with: built, serializer: serializer, validation: validation, queue: queue,
                downloadProgress: downloadProgress, completion: completion)
        }
        if let problem {
            task.transfer.fail(with: problem)
        } else if startImmediately {
            task.resume()
        }
        return task
    }

    /// A request with a body, split into the request and an upload body, so the body goes out as
    /// an upload task (with upload progress); `nil` for GET, HEAD and body-less requests.
    private static func asUpload(_ request: URLRequest) -> (URLRequest, Data)? {
        let method = (request.httpMethod ?? "GET").uppercased()
        guard let body = request.httpBody, method != "GET", method != "HEAD" else { return nil }
        var upload = request
        upload.httpBody = nil
        return (upload, body)
    }

    /// The async form of ``task(_:_:parameters:headers:parameterEncoding:serializer:validation:queue:startImmediately:uploadProgress:downloadProgress:completion:)``.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        parameterEncoding: (any RequestSerializer)? = nil, serializer: Serializer, validation: Validation = .default
    ) async throws(CourierError) -> (value: Serializer.Value, http: HTTPURLResponse) {
        let request = try request(method, path, parameters: parameters, headers: headers, parameterEncoding: parameterEncoding)
        return try await perform(request, serializer: serializer, validation: validation)
    }

    /// Sends a built request (as an upload when it has a body) and waits for the reply.
    func perform<Serializer: ResponseSerializer>(
        _ request: URLRequest, serializer: Serializer, validation: Validation
    ) async throws(CourierError) -> (value: Serializer.Value, http: HTTPURLResponse) {
        if let (upload, body) = Self.asUpload(request) {
            return try await manager.upload(for: upload, from: .data(body), serializer: serializer, validation: validation)
        }
        return try await manager.response(for: request, serializer: serializer, validation: validation)
    }
}
