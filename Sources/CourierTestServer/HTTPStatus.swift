import CourierSupport

/// Reason phrases for status lines.
enum HTTPStatus {
    /// The reason phrase for `code`, or a generic one for unregistered codes.
    static func reason(_ code: Int) -> String {
        HTTPReasonPhrase.phrase(for: code) ?? "Status \(code)"
    }

    /// Whether a response with `code` must not carry a body (1xx, 204, 304).
    static func forbidsBody(_ code: Int) -> Bool {
        (100..<200).contains(code) || code == 204 || code == 304
    }
}
