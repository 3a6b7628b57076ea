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
    /// Stop this attempt because the disk fell behind; continue once the writer's backlog is down
    /// to `drainedTo` bytes (TransferTask+BackPressure.swift).
    case pauseDownload(URLSessionTask, drainedTo: Int64)
    /// This attempt's 206 becomes the first connection of a split download over this map
    /// (TransferTask+Segments.swift), then the rest is done.
    indirect case split(URLSessionTask, SegmentMap, then: TransferAction)
    /// A chunk of the first connection of a split download, for its crew.
    case segmentData(URLSessionTask, Data)
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
        let action = locked { state -> TransferAction in
            // A failure already recorded (a write error, the deadline) stands: the attempt is ending.
            guard state.phase.isRunning(task), state.failure == nil, state.brokenAnswer == nil, state.stream?.expiredWait == nil
            else { return .none }
            state.metrics.responseHead(http.statusCode)
            state.restartWaitClock(awaitingHead: false)
            state.emit(.response(http))
            if let refusal {
                state.failure = refusal
                state.ignoresBody = true
                // The head the rule saw is the response the caller gets (as a status refusal keeps it).
                state.response = http
                return .cancel(task)
            }
            return state.headArrived(http, task)
        }
        perform(action)
    }

    func urlTask(_ task: URLSessionTask, didReceive data: Data) {
        // How far behind the disk is, read before locking: a decision never asks the writer.
        let backlog = writer?.statistics.backlog ?? 0
        let action = locked { state -> TransferAction in
            // A split download's bytes are its crew's (SplitCrew+Connections.swift).
            if state.file?.split != nil { return .segmentData(task, data) }
            guard state.phase.isRunning(task), state.failure == nil, state.brokenAnswer == nil,
                state.stream?.expiredWait == nil, !state.ignoresBody
            else { return .none }
            return state.bodyArrived(data, task, writerBacklog: backlog)
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
        case .pauseDownload(let task, let threshold):
            core.cancel(task)
            writer?.whenBacklog(atMost: threshold) { [weak self] in self?.continueAfterBackPressure() }
        case .split(let task, let map, let then):
            beginSegments(task, map)
            perform(then)
        case .segmentData(let task, let data):
            crewStep { $0.received(TransferState.primaryConnection, task, data, now: $1) }
        }
    }

    func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64) {
        let due = locked { state -> ([ProgressObserver], Progress)? in
            guard state.phase.isRunning(task) else { return nil }
            state.sent += bytesSent
            state.metrics.sent(bytesSent)
            return state.dueProgress(.upload)
        }
        if let (observers, snapshot) = due { deliver(snapshot, to: observers) }
    }

    func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream? {
        guard case .stream(_, let makeStream)? = upload else { return nil }
        do {
            return try makeStream()
        } catch {
            // Answering nil makes URLSession send an empty body without any error (Docs/Platform.md
            // §2.1), so fail the task ourselves.
            let problem = CourierError(
                code: .uploadSourceFailed, message: "the upload stream could not be created: \(error)",
                url: originalRequest.url, underlyingError: error)
            locked { if $0.failure == nil { $0.failure = problem } }
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
        locked { state in
            if state.phase.isCurrent(task) { state.challenge.rejectedBySession = true }
        }
    }

    func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // While a crew is installed, its first connection's ending is the crew's to decide. A crew
        // that ended or stopped is taken off the transfer in the same lock as the transfer decides
        // what follows, so a later ending of that request finds its attempt no longer current.
        if segmentsTookEnding(task, error) { return }
        takeUnannouncedRedirectHead(task, error: error)
        let facts = attemptFacts(after: error, url: task.currentRequest?.url ?? originalRequest.url)
        let followUp = locked { state -> FollowUp? in
            guard state.phase.isCurrent(task) else { return nil }  // a stopped attempt
            return state.attemptEnded(error, facts: facts)
        }
        perform(followUp)
    }
}
