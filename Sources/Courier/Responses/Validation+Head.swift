import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decisions at the response head: refuse a response before any of its body is accepted.
extension Validation {
    /// A rule run on the response head, before any body byte is accepted: it throws to refuse.
    public typealias HeadRule = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) throws -> Void

    /// This validation with `rule` run on each final response head, as soon as it arrives and
    /// before any byte of its body is accepted (Alamofire's `onHTTPResponse` with `.cancel`).
    ///
    /// Throwing refuses the response: the transfer stops there, no body byte reaches memory, a
    /// file or a stream's consumer, and the task fails with
    /// ``CourierError/Code-swift.struct/unacceptableResponse``, carrying the response (no body)
    /// and the rule's error as ``CourierError/underlyingError``. Use it to refuse what must not be
    /// read at all, such as a 2 GB `Content-Length` or the wrong type of file:
    ///
    /// ```swift
    /// let validation = Validation.default.validateHead { _, response throws(TooLarge) in
    ///     if response.expectedContentLength > 100_000_000 { throw TooLarge() }
    /// }
    /// ```
    ///
    /// Head rules see each response the task would deliver: a redirect Courier follows and a
    /// 401 it answers with the task's credential are not shown, the responses after them are.
    /// They run before the status and content-type checks, which need the body (an error page
    /// is kept for the error). A rule runs where the manager receives URLSession's callbacks, with
    /// every transfer of the manager waiting for it: keep it quick, and never block in it. A refusal is offered
    /// to retriers like any refused response.
    public func validateHead<Failure: Error>(
        _ rule: @escaping @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) throws(Failure) -> Void
    ) -> Validation {
        var copy = self
        copy.headRules.append { request, response in try rule(request, response) }
        return copy
    }

    /// Whether any head rule is set (tasks skip the head check without one).
    var decidesAtHead: Bool { !headRules.isEmpty }

    /// Throws the refusal of the first head rule that refuses `response`.
    func validateHead(request: URLRequest?, response: HTTPURLResponse) throws(CourierError) {
        for rule in headRules {
            do {
                try rule(request, response)
            } catch {
                throw CourierError(
                    code: .unacceptableResponse,
                    message: "a head rule refused the response before its body: \(error)",
                    url: request?.url ?? response.url, response: response, body: nil, underlyingError: error)
            }
        }
    }
}
