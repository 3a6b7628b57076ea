import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which responses count as success before a body is serialized or a download published.
///
/// The default accepts status 200–299 and any content type. A response that fails validation is
/// an error carrying the response and its body; a download that fails it is never published.
/// Content types are checked only for a response that has a body: an empty body, an answer to
/// `HEAD`, and a 204, 205 or 304 pass whatever `Content-Type` they carry.
public struct Validation: Sendable {
    /// Acceptable status codes; `nil` accepts any.
    public var acceptableStatusCodes: Set<Int>?
    /// Acceptable media types (`application/json`, `text/*`, `*/*`); `nil` accepts any.
    public var acceptableContentTypes: [String]?
    /// Whether the response's type must be one the request's `Accept` allows (``matchingAccept()``).
    public private(set) var checksAccept = false
    /// The rules added with ``validate(_:)``, in the order they run.
    private var rules: [Rule] = []
    /// The rules added with ``validateHead(_:)``, in the order they run (Validation+Head.swift).
    var headRules: [HeadRule] = []

    /// A rule of your own: it sees the request, the response head and the body (`nil` when the
    /// body is not in memory: a download's file, a stream at its head), and throws to refuse.
    public typealias Rule = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ body: Data?) throws -> Void

    /// Creates a validation.
    public init(statusCodes: (some Sequence<Int>)? = 200..<300, contentTypes: [String]? = nil) {
        self.acceptableStatusCodes = statusCodes.map { Set($0) }
        self.acceptableContentTypes = contentTypes
    }

    /// Status 200–299, any content type.
    public static let `default` = Validation()
    /// Accepts every response (transport errors still fail).
    public static let none = Validation(statusCodes: Optional<[Int]>.none)

    /// This validation with `rule` added after the rules it has (Alamofire's `validate { … }`).
    ///
    /// Rules run after the status and content-type checks, in the order added, and only for a
    /// response those accept; the first to throw refuses the response. The task then fails with
    /// ``CourierError/Code-swift.struct/unacceptableResponse``, carrying the response, its body and
    /// the rule's error as ``CourierError/underlyingError`` (`error.underlyingError as? YourFailure`).
    /// A download so refused is never published; retriers are asked about it like any refused
    /// response. A rule runs on the manager's queues: keep it quick, and never block in it.
    ///
    /// ```swift
    /// let validation = Validation.default.validate { _, response, body throws(APIFailure) in
    ///     if let body, let failure = try? JSONDecoder().decode(APIFailure.self, from: body) { throw failure }
    /// }
    /// ```
    public func validate<Failure: Error>(
        _ rule: @escaping @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ body: Data?) throws(Failure) -> Void
    ) -> Validation {
        var copy = self
        copy.rules.append { request, response, body in try rule(request, response, body) }
        return copy
    }

    /// This validation, also refusing a response whose `Content-Type` the request's `Accept` does
    /// not allow (media ranges with `q=0` allow nothing). A request without `Accept`, and a
    /// response without a body, pass. Off by default: many servers answer errors in another type
    /// than the one asked for, and a status check already catches those.
    public func matchingAccept() -> Validation {
        var copy = self
        copy.checksAccept = true
        return copy
    }

    /// Throws the first rule `response` breaks.
    public func validate(request: URLRequest?, response: HTTPURLResponse?, data: Data?) throws(CourierError) {
        guard let response else {
            if acceptableStatusCodes == nil && acceptableContentTypes == nil && !checksAccept && rules.isEmpty { return }
            throw CourierError.noResponse(url: request?.url)
        }
        if let codes = acceptableStatusCodes, !codes.contains(response.statusCode) {
            throw CourierError(
                code: .unacceptableStatusCode,
                message:
                    "the server answered HTTP \(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))",
                url: request?.url ?? response.url, response: response, body: data)
        }
        // A response with no body has no content to type: a 204 from a DELETE passes whatever
        // `Content-Type` a framework put on it (httpbin sends text/html), as in Alamofire.
        if let types = acceptableContentTypes, !Self.hasNoBody(request: request, response: response, data: data) {
            guard let mimeType = response.mimeType ?? response.value(forHTTPHeaderField: "Content-Type").map(Self.mediaType) else {
                // No type and a body not read into memory (a download, a stream's head): nothing
                // says it is wrong yet.
                if data == nil || types.contains("*/*") { return }
                throw contentTypeError("no Content-Type", types, request, response, data)
            }
            if !types.contains(where: { Self.mediaType(mimeType, matches: $0) }) {
                throw contentTypeError("Content-Type \(mimeType)", types, request, response, data)
            }
        }
        if checksAccept, let accept = request?.value(forHTTPHeaderField: "Accept"),
            !Self.hasNoBody(request: request, response: response, data: data)
        {
            let allowed = Self.acceptedRanges(accept)
            let mimeType = response.mimeType ?? response.value(forHTTPHeaderField: "Content-Type").map(Self.mediaType)
            // No type and a body not in memory: nothing says it is wrong yet (as above).
            if !(mimeType == nil && data == nil),
                !allowed.contains(where: { range in mimeType.map { Self.mediaType($0, matches: range) } ?? (range == "*/*") })
            {
                throw CourierError(
                    code: .unacceptableResponse,
                    message:
                        "the response has \(mimeType.map { "Content-Type " + $0 } ?? "no Content-Type"), which the request's Accept (\(accept)) does not allow",
                    url: request?.url ?? response.url, response: response, body: data)
            }
        }
        for rule in rules {
            do {
                try rule(request, response, data)
            } catch {
                throw CourierError(
                    code: .unacceptableResponse, message: "a validation rule refused the response: \(error)",
                    url: request?.url ?? response.url, response: response, body: data, underlyingError: error)
            }
        }
    }

    /// The media ranges an `Accept` value allows, lower-cased, without parameters: every range
    /// whose `q` is not 0 (RFC 9110 §12.5.1).
    static func acceptedRanges(_ accept: String) -> [String] {
        accept.split(separator: ",").compactMap { element in
            let parts = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let range = parts.first, !range.isEmpty else { return nil }
            let quality = parts.dropFirst().first { $0.lowercased().hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            if let quality, quality <= 0 { return nil }
            return range.lowercased()
        }
    }

    /// Whether the response has no body: one read and found empty, or one that cannot have a body
    /// (RFC 9110: an answer to HEAD, 1xx, 204, 205 and 304). `data` is `nil` when the body was not
    /// read into memory (a download on disk, a stream at its head).
    static func hasNoBody(request: URLRequest?, response: HTTPURLResponse, data: Data?) -> Bool {
        if let data, data.isEmpty { return true }
        if request?.httpMethod?.uppercased() == "HEAD" { return true }
        let status = response.statusCode
        return (100..<200).contains(status) || status == 204 || status == 205 || status == 304
    }

    private func contentTypeError(
        _ what: String, _ types: [String], _ request: URLRequest?, _ response: HTTPURLResponse, _ data: Data?
    ) -> CourierError {
        CourierError(
            code: .unacceptableContentType,
            message: "the response has \(what); acceptable: \(types.joined(separator: ", "))",
            url: request?.url ?? response.url, response: response, body: data)
    }

    /// `type/subtype` of a `Content-Type` value, lower-cased, without parameters.
    static func mediaType(_ contentType: String) -> String {
        contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        } ?? ""
    }

    /// Whether `mediaType` matches `pattern`, which may use `*` for the type or the subtype.
    static func mediaType(_ mediaType: String, matches pattern: String) -> Bool {
        let actual = Self.mediaType(mediaType).split(separator: "/", maxSplits: 1)
        let wanted = Self.mediaType(pattern).split(separator: "/", maxSplits: 1)
        guard actual.count == 2, wanted.count == 2 else { return false }
        return (wanted[0] == "*" || wanted[0] == actual[0]) && (wanted[1] == "*" || wanted[1] == actual[1])
    }
}
