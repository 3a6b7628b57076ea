import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the session router forwards to the object that drives one Courier task.
///
/// Every call carries the URLSession task it is about: a Courier task may run several URLSession
/// tasks in its life (Courier's own pause and resume re-issue the request), and callbacks from an
/// attempt that is no longer current must be ignored.
protocol TaskDelegate: AnyObject, Sendable {
    func urlTask(_ task: URLSessionTask, didReceive response: URLResponse)
    func urlTask(_ task: URLSessionTask, didReceive data: Data)
    func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64)
    func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream?
    func urlTask(_ task: URLSessionTask, willRedirectTo request: URLRequest, response: HTTPURLResponse) -> URLRequest?
    func urlTaskDidRejectChallenge(_ task: URLSessionTask)
    func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?)
    /// `task` waited behind the per-host cap and is resumed now (for its timeline).
    func urlTaskLeftHostQueue(_ task: URLSessionTask)
}
