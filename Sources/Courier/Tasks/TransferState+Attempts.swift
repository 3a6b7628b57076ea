import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The events of an attempt, decided on the transfer's state: its response head arrived, a chunk
/// of its body arrived, it ended. Each returns what the driver does after unlocking
/// (TransferTask+URLSessionEvents.swift); a download's and a stream's own rules are their files'.
extension TransferState {
    /// A final response head of the current attempt, once the caller's head rules passed it.
    mutating func headArrived(_ http: HTTPURLResponse, _ task: URLSessionTask) -> TransferAction {
        if let plan = file?.plan { return downloadResponse(http, task, plan) }
        // Lengths are Courier's to read: libcurl takes `0x5` for 0 and would end the body there.
        let contentLength: Int64?
        switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
        case .malformed(let value):
            failure = .invalidResponse("a malformed Content-Length (\(value.debugDescription))", http)
            return .cancel(task)
        case .impossible(let value):
            brokenAnswer = .impossibleLength(value, http)
            return .cancel(task)
        case .length(let length): contentLength = length
        case .absent: contentLength = nil
        }
        spanEnd = nil
        var decision = RangeContinuation.replace
        if let offset = rangeOffset {
            decision = RangeContinuation.decide(
                offset: offset, knownTotal: expectedToReceive, validator: validator,
                answer: BodyFacts.answer(http, contentLength: contentLength))
        }
        rangeOffset = nil
        switch decision {
        case .append(let end):
            response = http
            spanEnd = end
            continuedByRange = true
            restarts = 0
            if expectedToReceive == nil {
                expectedToReceive =
                    http.value(forHTTPHeaderField: "Content-Range")
                    .flatMap(ContentRange.init)?.completeLength
            }
            guard expectedToReceive != nil else {
                // `bytes N-M/*` after a body of unknown length: nothing could prove the whole complete.
                failure = .invalidResponse(
                    "a 206 without a complete length continues a body of unknown length", http)
                return .cancel(task)
            }
        case .alreadyComplete:
            ignoresBody = true
        case .invalid(let why):
            failure = .invalidResponse(why, http)
            return .cancel(task)
        case .restartWithoutRange(let why):
            if let refusal = streamRefusesRestart(why, http) { return refusal(task) }
            // The answer does not continue the body held: never splice, fetch it all again.
            if let problem = startOver(.answerDidNotContinue(why, http)) {
                failure = problem
                return .cancel(task)
            }
            metrics.endAttempt(.restarted)
            metrics.nextKind = .restart
            return .restart(task, context.originalRequest)
        case .replace:
            if let refusal = streamRefusesRestart("a new response answered a stream already under way", http) {
                return refusal(task)
            }
            // A new final response on the same task (a 401 answered, a redirect) starts a
            // new body: keeping the old bytes would mix bodies (Docs/Platform.md §5.4).
            _ = startOver(.replacedByAnswer)
            response = http
            // Only a successful body can be continued: an error page's validator must never
            // back a `Range` request for the resource.
            validatorSource = (200..<300).contains(http.statusCode) ? .response(http) : .known(nil)
            expectedToReceive = BodyFacts.isEncoded(http) ? nil : contentLength
            if let accepted = acceptStreamResponse(http) {
                return accepted
            }
            guard memory.expect(expectedToReceive) else {
                failure = .responseTooLarge(
                    url: context.originalRequest.url, limit: context.maximumResponseSize, response: response)
                return .cancel(task)
            }
        }
        return .none
    }

    /// A chunk of the current attempt's body, which is still wanted. `writerBacklog`: how far
    /// behind a download's disk was when it came (0 for other kinds).
    mutating func bodyArrived(_ data: Data, _ task: URLSessionTask, writerBacklog: Int64 = 0) -> TransferAction {
        metrics.received(data.count)
        if stream?.accepted == true { return streamData(data, task) }
        if let plan = file?.plan {
            switch downloadData(data, plan, writerBacklog: writerBacklog) {
            case .accepted: break
            case .stop(let problem):
                failure = problem
                return .cancel(task)
            // No longer current: its late callbacks are ignored, the next attempt continues.
            case .pause(let drainedTo):
                return .pauseDownload(task, drainedTo: drainedTo)
            }
        } else {
            switch memory.append(data, received: received, spanEnd: spanEnd) {
            case .appended:
                received += Int64(data.count)
            case .pastRange(let end):
                failure = .invalidResponse("the 206 went on past the end of its range (byte \(end))", response)
                return .cancel(task)
            case .tooLarge:
                failure = .responseTooLarge(
                    url: context.originalRequest.url, limit: context.maximumResponseSize, response: response)
                return .cancel(task)
            }
        }
        guard let (observers, snapshot) = dueProgress(.download) else { return .none }
        return .progress(observers, snapshot)
    }

    /// The current attempt ended (URLSession's completion) with `error`: a follow-up of the same
    /// attempt, a retry, a continuation, or the end of the task. `facts`: what the driver knows of
    /// the world (the manager invalidated, the route gone).
    mutating func attemptEnded(_ error: (any Error)?, facts: AttemptFacts) -> FollowUp {
        let invalidated = facts.invalidated
        if let request = followUpRequest() { return .restart(request) }
        if let plan = file?.plan { return downloadCompletion(error, plan, facts: facts) }
        let ended: CourierError?
        if phase.state == .cancelling {
            // Manager-side flag: a cancelled task can still finish with no error (Docs/Platform.md §2.8).
            ended = .cancelled(url: context.originalRequest.url)
        } else if let problem = failure {
            ended = problem
        } else if let expired = stream?.expiredWait {
            // The stream's own head or idle limit ended the attempt, as URLSession's timeout
            // would have: the retriers are asked about it like any timeout.
            ended = expired
        } else if let broken = brokenAnswer {
            ended = broken
        } else if let error {
            ended = classify(error, invalidated: invalidated)
        } else if continuedByRange, !ignoresBody, let total = expectedToReceive, received != total {
            // A body continued with Range that ended short of the length first announced.
            ended = .invalidResponse(
                "the server ended the body at byte \(received) of the \(total) it announced", response)
        } else {
            ended = nil
        }
        if failure == nil, let followUp = retryFollowUp(after: ended, facts: facts) { return followUp }
        return .finish(complete(error: ended))
    }

    /// The failure URLSession's `error` means for this task (`nil`: none, report the response).
    func classify(_ error: any Error, invalidated: Bool) -> CourierError? {
        let isCancel = (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorCancelled
        if isCancel, challenge.rejectedBySession, response?.statusCode == 401 {
            // The challenge was refused for want of a credential: report the 401 itself.
            return nil
        }
        if isCancel, invalidated { return .sessionInvalidated(url: context.originalRequest.url) }
        return .transport(
            error, url: context.originalRequest.url, response: response,
            tls: context.tls.context(for: currentRequest?.url ?? context.originalRequest.url))
    }
}
