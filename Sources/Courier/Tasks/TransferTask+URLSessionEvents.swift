import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a callback decided under the lock, to be done after it.
enum TransferAction {
    case none
    /// Stop this attempt, through ``SessionCore/cancel(_:)`` (its completion then reports the
    /// failure recorded in the state; a paused attempt is no longer current, so its late
    /// callbacks are dropped).
    case cancel(URLSessionTask)
    /// Drop this attempt and start another with this request.
    case restart(URLSessionTask, URLRequest)
    /// Hand a progress snapshot to these observers.
    case progress([ProgressObserver], Progress)
    /// Call a download's `.atResponse` destination closure for this response and partial file.
    case resolveDestination(DownloadDestination, HTTPURLResponse, URL)
    /// Hand a streamed body's accepted response head to its consumer.
    case streamResponse(StreamBuffer, HTTPURLResponse)
    /// Hand a chunk to a stream's consumer, then do the rest.
    indirect case streamChunk(StreamBuffer, Data, then: TransferAction)
    /// Stop this attempt because the stream's consumer fell behind; continue once it has caught up.
    case pauseStream(URLSessionTask, StreamBuffer, drainedTo: Int)
}

extension TransferTask: TaskDelegate {
    func urlTask(_ task: URLSessionTask, didReceive response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        // Interim responses (`100 Continue` of a streamed upload) reach this callback on Linux
        // (Docs/Platform.md §2.1); only a final response starts a body.
        if (100..<200).contains(http.statusCode) { return }
        // The caller's head rules run here, outside the lock; callbacks run one at a time, so no
        // body byte of this response is looked at before the answer is in (TransferTask+HeadRules.swift).
        let refusal = headRefusal(http, task)
        let action = state.withLock { state -> TransferAction in
            // A failure already recorded (a write error, the deadline) stands: the attempt is ending.
            guard state.phase.isRunning(task), state.failure == nil, state.stream?.expiredWait == nil else { return .none }
            state.metrics.responseHead(http.statusCode)
            restartWaitClock(awaitingHead: false, &state)
            emit(.response(http), state)
            if let refusal {
                state.failure = refusal
                state.ignoresBody = true
                return .cancel(task)
            }
            if let plan = state.file?.plan { return downloadResponse(http, task, plan, &state) }
            // Lengths are Courier's to read: libcurl takes `0x5` for 0 and would end the body there.
            let contentLength: Int64?
            switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
            case .malformed(let value):
                state.failure = .invalidResponse("a malformed Content-Length (\(value.debugDescription))", http)
                return .cancel(task)
            case .length(let length): contentLength = length
            case .absent: contentLength = nil
            }
            state.spanEnd = nil
            var decision = RangeContinuation.replace
            if let offset = state.rangeOffset {
                decision = RangeContinuation.decide(
                    offset: offset, knownTotal: state.expectedToReceive, validator: state.validator,
                    answer: Self.answer(http, contentLength: contentLength))
            }
            state.rangeOffset = nil
            switch decision {
            case .append(let end):
                state.response = http
                state.spanEnd = end
                state.continuedByRange = true
                state.restarts = 0
                if state.expectedToReceive == nil {
                    state.expectedToReceive = http.value(forHTTPHeaderField: "Content-Range")
                        .flatMap(ContentRange.init)?.completeLength
                }
                guard state.expectedToReceive != nil else {
                    // `bytes N-M/*` after a body of unknown length: nothing could prove the whole complete.
                    state.failure = .invalidResponse(
                        "a 206 without a complete length continues a body of unknown length", http)
                    return .cancel(task)
                }
            case .alreadyComplete:
                state.ignoresBody = true
            case .invalid(let why):
                state.failure = .invalidResponse(why, http)
                return .cancel(task)
            case .restartWithoutRange(let why):
                if let refusal = streamRefusesRestart(why, http, &state) { return refusal(task) }
                // The answer does not continue the body held: never splice, fetch it all again.
                resetBody(&state)
                state.restarts += 1
                guard state.restarts <= Self.restartLimit else {
                    state.failure = .invalidResponse("\(why), \(state.restarts) times in a row", http)
                    return .cancel(task)
                }
                state.phase.attemptReplaced()
                state.metrics.endAttempt(.restarted)
                state.metrics.nextKind = .restart
                return .restart(task, originalRequest)
            case .replace:
                if let refusal = streamRefusesRestart("a new response answered a stream already under way", http, &state) {
                    return refusal(task)
                }
                // A new final response on the same task (a 401 answered, a redirect) starts a
                // new body: keeping the old bytes would mix bodies (Docs/Platform.md §5.4).
                resetBody(&state)
                state.restarts = 0
                state.response = http
                // Only a successful body can be continued: an error page's validator must never
                // back a `Range` request for the resource.
                state.validator = (200..<300).contains(http.statusCode) ? Self.strongValidator(of: http) : nil
                state.expectedToReceive = Self.isEncoded(http) ? nil : contentLength
                if let accepted = acceptStreamResponse(http, &state) {
                    return accepted
                }
                guard state.memory.expect(state.expectedToReceive) else {
                    state.failure = .responseTooLarge(
                        url: originalRequest.url, limit: settings.maximumResponseSize, response: state.response)
                    return .cancel(task)
                }
            }
            return .none
        }
        perform(action)
    }

    func urlTask(_ task: URLSessionTask, didReceive data: Data) {
        let action = state.withLock { state -> TransferAction in
            guard state.phase.isRunning(task), state.failure == nil,
                state.stream?.expiredWait == nil, !state.ignoresBody
            else { return .none }
            state.metrics.received(data.count)
            if state.stream?.accepted == true { return streamData(data, task, &state) }
            if let plan = state.file?.plan {
                switch downloadData(data, plan, &state) {
                case .accepted: break
                case .stop(let problem):
                    state.failure = problem
                    return .cancel(task)
                // No longer current: its late callbacks are ignored, the next attempt continues.
                case .pause: return .cancel(task)
                }
            } else {
                switch state.memory.append(data, received: state.received, spanEnd: state.spanEnd) {
                case .appended:
                    state.received += Int64(data.count)
                case .pastRange(let end):
                    state.failure = .invalidResponse("the 206 went on past the end of its range (byte \(end))", state.response)
                    return .cancel(task)
                case .tooLarge:
                    state.failure = .responseTooLarge(
                        url: originalRequest.url, limit: settings.maximumResponseSize, response: state.response)
                    return .cancel(task)
                }
            }
            guard let (observers, snapshot) = dueProgress(.download, &state) else { return .none }
            return .progress(observers, snapshot)
        }
        perform(action)
    }

    func perform(_ action: TransferAction) {
        switch action {
        case .none: break
        case .cancel(let task): core.cancel(task)
        case .restart(let task, let request):
            core.cancel(task)
            startAttempt(request)
        case .progress(let observers, let snapshot): deliver(snapshot, to: observers)
        case .resolveDestination(let destination, let response, let partial):
            resolveDestination(destination, response, partial)
        case .streamResponse(let buffer, let response): buffer.deliverResponse(response)
        case .streamChunk(let buffer, let data, let then):
            buffer.append(data)
            perform(then)
        case .pauseStream(let task, let buffer, let threshold):
            core.cancel(task)
            buffer.notePause()
            buffer.whenDrained(atMost: threshold) { [weak self] in self?.continueAfterStreamDrain() }
        }
    }

    func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64) {
        let due = state.withLock { state -> ([ProgressObserver], Progress)? in
            guard state.phase.isRunning(task) else { return nil }
            state.sent += bytesSent
            state.metrics.sent(bytesSent)
            return dueProgress(.upload, &state)
        }
        if let (observers, snapshot) = due { deliver(snapshot, to: observers) }
    }

    func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream? {
        guard case .upload(.stream(_, let makeStream)) = kind else { return nil }
        do {
            return try makeStream()
        } catch {
            // Answering nil makes URLSession send an empty body without any error (Docs/Platform.md
            // §2.1), so fail the task ourselves.
            let problem = CourierError(
                code: .uploadSourceFailed, message: "the upload stream could not be created: \(error)",
                url: originalRequest.url, underlyingError: error)
            state.withLock { if $0.failure == nil { $0.failure = problem } }
            // This callback runs synchronously on FoundationNetworking's internal work queue, and
            // `cancel()` does a `sync` onto that queue: called from here it traps. The cancel runs
            // on the call queue; the recorded failure decides the outcome whatever finishes first.
            perform(.cancel(task))
            return nil
        }
    }

    func urlTask(_ task: URLSessionTask, willRedirectTo request: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        redirect(task, to: request, response: response)
    }

    func urlTaskDidRejectChallenge(_ task: URLSessionTask) {
        state.withLock { state in
            if state.phase.isCurrent(task) { state.challenge.rejectedBySession = true }
        }
    }

    func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let followUp = state.withLock { state -> FollowUp? in
            guard state.phase.isCurrent(task) else { return nil }  // a stopped attempt
            if let request = followUpRequest(&state) { return .restart(request) }
            if let plan = state.file?.plan { return downloadCompletion(error, plan, &state) }
            let failure: CourierError?
            if state.phase.state == .cancelling {
                // Manager-side flag: a cancelled task can still finish with no error (Docs/Platform.md §2.8).
                failure = .cancelled(url: originalRequest.url)
            } else if let problem = state.failure {
                failure = problem
            } else if let expired = state.stream?.expiredWait {
                // The stream's own head or idle limit ended the attempt, as URLSession's timeout
                // would have: the retriers are asked about it like any timeout.
                failure = expired
            } else if let error {
                failure = classify(error, state)
            } else if state.continuedByRange, !state.ignoresBody, let total = state.expectedToReceive, state.received != total {
                // A body continued with Range that ended short of the length first announced.
                failure = .invalidResponse(
                    "the server ended the body at byte \(state.received) of the \(total) it announced", state.response)
            } else {
                failure = nil
            }
            if state.failure == nil, let followUp = retryFollowUp(after: failure, &state) { return followUp }
            return .finish(completeLocked(&state, error: failure))
        }
        perform(followUp)
    }

    func classify(_ error: any Error, _ state: State) -> CourierError? {
        let isCancel = (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorCancelled
        if isCancel, state.challenge.rejectedBySession, state.response?.statusCode == 401 {
            // The challenge was refused for want of a credential: report the 401 itself.
            return nil
        }
        if isCancel, core.isInvalidated { return .sessionInvalidated(url: originalRequest.url) }
        return .transport(
            error, url: originalRequest.url, response: state.response,
            tls: core.tls.context(for: state.currentRequest?.url ?? originalRequest.url))
    }

    // MARK: - Response facts

    /// A validator that makes `If-Range` safe: a strong ETag, else `Last-Modified`. Nothing when
    /// the body is content-encoded (offsets would count decoded bytes).
    static func strongValidator(of response: HTTPURLResponse) -> String? {
        StrongValidator.of(
            etag: response.value(forHTTPHeaderField: "ETag"), lastModified: response.value(forHTTPHeaderField: "Last-Modified"),
            contentEncoding: response.value(forHTTPHeaderField: "Content-Encoding"))
    }
}

