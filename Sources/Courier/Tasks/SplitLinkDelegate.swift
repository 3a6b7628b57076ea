import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Routes the callbacks of one request of a split download's connection (not its first, which is
/// the transfer's own) to the transfer that runs the crew. The lane's table holds it until the
/// request ends; the transfer holds no reference to it.
final class SplitLinkDelegate: TaskDelegate {
    let transfer: TransferTask
    let id: ConnectionID

    init(transfer: TransferTask, id: ConnectionID) {
        self.transfer = transfer
        self.id = id
    }

    func urlTask(_ task: URLSessionTask, didReceive response: URLResponse) {
        guard let http = response as? HTTPURLResponse, !(100..<200).contains(http.statusCode) else { return }
        transfer.crewStep { [id] in $0.answered(id, task, http, now: $1) }
    }

    func urlTask(_ task: URLSessionTask, didReceive data: Data) {
        transfer.crewStep { [id] in $0.received(id, task, data, now: $1) }
    }

    func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64) {}
    func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream? { nil }

    func urlTask(_ task: URLSessionTask, willRedirectTo request: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        // A segment's request goes to the URL that served the first answer: a redirect now could
        // lead to another version, so it is not followed (its 3xx is not a 206).
        nil
    }

    func urlTaskDidRejectChallenge(_ task: URLSessionTask) {}

    func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let problem = error.map { CourierError.transport($0, url: task.originalRequest?.url, response: nil, tls: nil) }
        let facts = transfer.attemptFacts(after: error, url: task.currentRequest?.url ?? task.originalRequest?.url)
        transfer.crewStep(facts: facts) { [id] in $0.ended(id, task, error: problem, now: $1).actions }
    }

    func urlTaskLeftHostQueue(_ task: URLSessionTask) {}
}
