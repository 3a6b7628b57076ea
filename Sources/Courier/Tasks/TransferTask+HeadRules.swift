import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The caller's decision at the response head (``Validation/validateHead(_:)``).
///
/// FoundationNetworking ignores the disposition a delegate gives for a response (Docs/Platform.md
/// §2.2): the body keeps coming. So the refusal is Courier's to hold: it is recorded as the
/// attempt's failure before the callback returns, and every later body callback of the attempt
/// finds a failure and drops its bytes.
extension TransferTask {
    /// The refusal of `http` by the validation's head rules, or `nil` to go on. Runs the rules
    /// outside the lock.
    func headRefusal(_ http: HTTPURLResponse, _ task: URLSessionTask) -> CourierError? {
        guard validation.decidesAtHead else { return nil }
        let request = locked { state -> URLRequest? in
            // A 307/308 Courier re-sends itself (its redirect was decided before this head) is not either.
            guard state.phase.isRunning(task), state.pendingRedirect == nil else { return nil }
            let request = state.currentRequest ?? originalRequest
            // A 401 this task answers with its credential is not the response the caller gets.
            if http.statusCode == 401,
                state.challenge.wouldAnswer(http, credential: state.options.credential, request: request, originalURL: originalRequest.url)
            {
                return nil
            }
            return request
        }
        guard let request else { return nil }
        do {
            try validation.validateHead(request: request, response: http)
            return nil
        } catch {
            return error
        }
    }
}
