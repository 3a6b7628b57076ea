/// An error thrown by ``TestServer/init(host:port:root:)`` when the listening socket cannot be set up.
public struct TestServerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, e.g. `bind failed (errno 98)`.
    public let message: String
    /// The `errno` value reported by the failing system call.
    public let code: Int32

    /// Creates an error with a message and an `errno` code.
    public init(message: String, code: Int32) {
        self.message = message
        self.code = code
    }

    /// The message followed by the errno code.
    public var description: String { "TestServerError: \(message)" }

    /// An error for a failed POSIX call. (No `strerror`: it is not thread-safe.)
    static func posix(_ call: String, _ code: Int32) -> TestServerError {
        TestServerError(message: "\(call) failed (errno \(code))", code: code)
    }
}
