/// An HTTP request method (RFC 9110 §9).
///
/// Methods are case-sensitive tokens; the standard ones are upper-case. Any other token can be
/// written as a string literal: `let method: HTTPMethod = "PROPFIND"`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The method token exactly as sent on the request line.
    public let rawValue: String

    /// A method with this token, kept as given (methods are case-sensitive).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A method with this token, kept as given.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The token.
    public var description: String { rawValue }
}
