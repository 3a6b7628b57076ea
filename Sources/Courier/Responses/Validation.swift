import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which responses count as success before a body is serialized or a download published.
///
/// The default accepts status 200–299 and any content type. A response that fails validation is
/// an error carrying the response and its body; a download that fails it is never published.
public struct Validation: Sendable {
    /// Acceptable status codes; `nil` accepts any.
    public var acceptableStatusCodes: Set<Int>?
    /// Acceptable media types (`application/json`, `text/*`, `*/*`); `nil` accepts any.
    public var acceptableContentTypes: [String]?

    /// Creates a validation.
    public init(statusCodes: (some Sequence<Int>)? = 200..<300, contentTypes: [String]? = nil) {
        self.acceptableStatusCodes = statusCodes.map { Set($0) }
        self.acceptableContentTypes = contentTypes
    }

    /// Status 200–299, any content type.
    public static let `default` = Validation()
    /// Accepts every response (transport errors still fail).
    public static let none = Validation(statusCodes: Optional<[Int]>.none)

    /// Throws the first rule `response` breaks.
    public func validate(request: URLRequest?, response: HTTPURLResponse?, data: Data?) throws(CourierError) {
        guard let response else {
            if acceptableStatusCodes == nil && acceptableContentTypes == nil { return }
            throw CourierError.noResponse(url: request?.url)
        }
        if let codes = acceptableStatusCodes, !codes.contains(response.statusCode) {
            throw CourierError(
                code: .unacceptableStatusCode,
                message: "the server answered HTTP \(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))",
                url: request?.url ?? response.url, response: response, body: data)
        }
        if let types = acceptableContentTypes {
            let bodyIsEmpty = data?.isEmpty ?? true
            guard let mimeType = response.mimeType ?? response.value(forHTTPHeaderField: "Content-Type").map(Self.mediaType) else {
                if bodyIsEmpty || types.contains("*/*") { return }
                throw contentTypeError("no Content-Type", types, request, response, data)
            }
            if !types.contains(where: { Self.mediaType(mimeType, matches: $0) }) {
                throw contentTypeError("Content-Type \(mimeType)", types, request, response, data)
            }
        }
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
