import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a response body into a value. Runs on the manager's processing queue, after
/// validation; throw ``CourierError`` (or any error, which is wrapped as `decodingFailed`).
public protocol ResponseSerializer: Sendable {
    /// What the serializer produces.
    associatedtype Value: Sendable
    /// Produces the value from a successful, validated response.
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Value
    /// Whether serializing is real work that belongs on the processing queue (the default). A
    /// serializer that only hands the body on (``DataResponseSerializer``) says `false`: it then
    /// runs, with validation, where the transfer ended, saving a thread hand-off per request —
    /// about 5% of the CPU a small request costs on Linux.
    var needsProcessingQueue: Bool { get }
}

extension ResponseSerializer {
    /// `true`: serializers run on the manager's processing queue.
    public var needsProcessingQueue: Bool { true }
}

extension ResponseSerializer {
    /// `serialize` as a typed result, for a data task's body and a downloaded file alike: a
    /// `CourierError` stays one (with the exchange added), anything else is
    /// ``CourierError/Code-swift.struct/decodingFailed``, "the serializer failed`source`: …".
    /// `body` is the body to attach to the error (`nil` for a file).
    func result(
        request: URLRequest?, response: HTTPURLResponse?, data: Data, body: Data?, source: String = ""
    ) -> Result<Value, CourierError> {
        do {
            return .success(try serialize(request: request, response: response, data: data))
        } catch let error as CourierError {
            return .failure(error.adding(url: request?.url, response: response, body: body))
        } catch {
            return .failure(
                CourierError(
                    code: .decodingFailed, message: "the serializer failed\(source): \(error)", url: request?.url,
                    response: response, body: body, underlyingError: error))
        }
    }
}

/// Which empty bodies are legitimate: RFC 9110 gives 204 and 205 no content and HEAD no body.
/// Anywhere else an empty body is a ``CourierError/Code-swift.struct/emptyResponse`` error for
/// serializers that need content.
public struct EmptyResponsePolicy: Sendable {
    /// Status codes whose empty body is fine.
    public var statusCodes: Set<Int>
    /// Request methods whose empty body is fine.
    public var methods: Set<String>

    /// 204 and 205, and HEAD requests.
    public static let standard = EmptyResponsePolicy(statusCodes: [204, 205], methods: ["HEAD"])
    /// Every empty body is fine, whatever the status or method: for endpoints whose answer is
    /// the status alone (a 200, 201 or 202 with nothing in it).
    public static let any = EmptyResponsePolicy(statusCodes: [], methods: [], allowsAll: true)

    /// ``any``: every empty body is fine.
    private var allowsAll = false

    /// Creates a policy.
    public init(statusCodes: Set<Int>, methods: Set<String>) {
        self.statusCodes = statusCodes
        self.methods = methods
    }

    private init(statusCodes: Set<Int>, methods: Set<String>, allowsAll: Bool) {
        self.init(statusCodes: statusCodes, methods: methods)
        self.allowsAll = allowsAll
    }

    /// Whether an empty body is acceptable for this exchange.
    public func allowsEmptyBody(request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        if allowsAll { return true }
        if let code = response?.statusCode, statusCodes.contains(code) { return true }
        if let method = request?.httpMethod?.uppercased(), methods.contains(method) { return true }
        return false
    }

    func emptyError(request: URLRequest?, response: HTTPURLResponse?) -> CourierError {
        let status = response.map { " (status \($0.statusCode))" } ?? ""
        return CourierError(
            code: .emptyResponse,
            message: "the response body is empty\(status); only 204, 205 and HEAD responses may be empty",
            url: request?.url, response: response)
    }
}
