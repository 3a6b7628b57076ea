import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession delegate: a thin router. Every callback looks up the per-task delegate by
/// `taskIdentifier` and forwards; no transfer logic lives here.
///
/// All delegate methods are implemented in this one final class because FoundationNetworking
/// only calls methods declared by the class that conforms (Docs/Platform.md §5.3). It holds the table,
/// never the manager, so URLSession → router → table has no cycle back to the manager.
final class SessionDelegate: NSObject, Sendable {
    let table: TaskDelegateTable
    /// Where the next task waiting for a per-host slot is resumed (``SessionCore/callQueue``).
    private let callQueue: DispatchQueue
    private let didInvalidate: @Sendable ((any Error)?) -> Void

    init(table: TaskDelegateTable, callQueue: DispatchQueue, didInvalidate: @escaping @Sendable ((any Error)?) -> Void) {
        self.table = table
        self.callQueue = callQueue
        self.didInvalidate = didInvalidate
    }
}

extension SessionDelegate: URLSessionDelegate {
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        didInvalidate(error)
    }
}

extension SessionDelegate: URLSessionTaskDelegate {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        // `bytesSent` is exact per call; the totals are read late and can repeat (Docs/Platform.md §2.1).
        table.delegate(for: task.taskIdentifier)?.urlTask(task, didSendBodyData: bytesSent)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping (InputStream?) -> Void
    ) {
        // Arrives on an arbitrary thread, not the delegate queue (Docs/Platform.md §2.1).
        completionHandler(table.delegate(for: task.taskIdentifier)?.urlTaskNeedsNewBodyStream(task))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // The handler must be called exactly once: never answering hangs the task, answering
        // twice crashes (Docs/Platform.md §4.4).
        guard let delegate = table.delegate(for: task.taskIdentifier) else { return completionHandler(request) }
        // Once the task's cancel went out, FoundationNetworking traps on an answer: the cancel ends
        // the task. A cancel asked for meanwhile waits for the answer (TaskDelegateTable.RedirectGuard).
        guard table.beginRedirect(task.taskIdentifier) else { return }
        completionHandler(delegate.urlTask(task, willRedirectTo: request, response: response))
        // `cancel()` waits for URLSession's work queue: not on this thread, and after the answer.
        if table.endRedirect(task.taskIdentifier) { callQueue.async { task.cancel() } }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // `.performDefaultHandling` with no credential hangs forever on Linux and a nil
        // credential with `.useCredential` crashes (Docs/Platform.md §2.4). Cancel the challenge and let
        // the task report the 401 it already received as an HTTP status.
        table.delegate(for: task.taskIdentifier)?.urlTaskDidRejectChallenge(task)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (delegate, next) = table.remove(task.taskIdentifier)
        // A slot of this host is free: the next waiting task starts (Docs/Platform.md §6, the per-host
        // cap). `resume()` waits for URLSession's busy work queue: not on this thread.
        if let next {
            table.delegate(for: next.taskIdentifier)?.urlTaskLeftHostQueue(next)
            callQueue.async { next.resume() }
        }
        delegate?.urlTask(task, didCompleteWithError: error)
    }
}

extension SessionDelegate: URLSessionDataDelegate {
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        // The disposition is ignored on Linux (Docs/Platform.md §2.2); answer anyway for other platforms.
        // For a request Courier marked, the head FoundationNetworking built from is cut down: the response
        // everything after this sees is built from the whole head (HeadDiet.swift).
        table.delegate(for: dataTask.taskIdentifier)?.urlTask(dataTask, didReceive: HeadDiet.restored(response))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        table.delegate(for: dataTask.taskIdentifier)?.urlTask(dataTask, didReceive: data)
    }
}
