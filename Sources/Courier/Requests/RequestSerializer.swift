import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters into a request: into its URL query, or into its body with a matching
/// `Content-Type`. See ``URLEncodedFormSerializer`` and ``JSONRequestSerializer``.
public protocol RequestSerializer: Sendable {
    /// Returns `request` with `parameters` encoded into it; throws CourierError (.invalidRequest).
    ///
    /// `nil` parameters return `request` unchanged.
    func serialize(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest
}

extension RequestSerializer {
    /// Sets `Content-Type` to `value` unless the caller already chose one (any spelling of the
    /// name): an explicit choice, such as a vendor media type, wins.
    static func setContentType(_ value: String, ifMissingIn request: inout URLRequest) {
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(value, forHTTPHeaderField: "Content-Type")
        }
    }
}
