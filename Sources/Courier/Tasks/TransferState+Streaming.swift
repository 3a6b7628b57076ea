import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed body's rules, decided on the transfer's state (the stream's own decisions are
/// ``StreamBody``'s): bytes handed to a consumer cannot be taken back, so after the first one a
/// stream never starts over; it continues with `Range`/`If-Range` or fails.
extension TransferState {
    /// Whether the next attempt continues the body held instead of starting over: a download's
    /// partial file, or the bytes a stream already handed to its consumer.
    func keepsBodyAcrossAttempts() -> Bool {
        if let stream { return stream.accepted }
        return file != nil  // a download: its partial file
    }

    /// A stream whose consumer has bytes that no later attempt could continue (no strong
    /// validator): it must not be retried or resumed, because starting over would repeat them.
    func streamCannotContinue() -> Bool {
        guard let stream, stream.hasDelivered(received: received) else { return false }
        return !canContinueByRange()
    }

    /// A stream under way refuses an answer that would start its body over (`nil` otherwise).
    mutating func streamRefusesRestart(
        _ why: String, _ response: HTTPURLResponse
    )
        -> ((URLSessionTask) -> TransferAction)?
    {
        guard let stream, stream.hasDelivered(received: received) else { return nil }
        failure = .invalidResponse(
            "\(why); the \(received) bytes already delivered cannot be taken back, so the stream cannot start over",
            response)
        return { .cancel($0) }
    }

    /// A final response for a stream: accepted when validation passes, so an error page never
    /// looks like a stream (it is held in memory as a data task's body and becomes the error).
    /// `nil` when it is not accepted, or the task is no stream.
    mutating func acceptStreamResponse(_ response: HTTPURLResponse) -> TransferAction? {
        guard let buffer = stream?.buffer else { return nil }
        var refusal: CourierError?
        do {
            try context.validation.validate(request: currentRequest, response: response, data: nil)
        } catch {
            refusal = error
        }
        switch stream?.headArrived(passesValidation: refusal == nil, now: now) {
        case .deliver?: return .streamResponse(buffer, response)
        case .sameResource?: return TransferAction.none
        case .refuse?:
            failure = refusal?.adding(url: context.originalRequest.url, response: response, body: nil)
            return phase.attempt.map { .cancel($0) } ?? TransferAction.none
        case .holdErrorPage?, nil: return nil
        }
    }

    /// A chunk of an accepted stream: checked against its range, counted, and handed to the
    /// consumer, unless the consumer is too far behind.
    mutating func streamData(_ data: Data, _ task: URLSessionTask) -> TransferAction {
        guard let buffer = stream?.buffer, let policy = stream?.policy else { return .none }
        if let end = spanEnd, received + Int64(data.count) > end {
            failure = .invalidResponse("the 206 went on past the end of its range (byte \(end))", response)
            return .cancel(task)
        }
        let canContinue = canContinueByRange()
        var then = TransferAction.none
        switch stream?.chunkArrived(count: data.count, buffered: buffer.bufferedBytes, canContinue: canContinue, now: now) {
        case .overflow?:
            failure = .bufferOverflow(
                policy, canPause: policy.overflow == .pause, method: context.originalRequest.httpMethod,
                mayContinue: AutomaticResend.isAllowed(.rangeContinuation, for: context.originalRequest), url: context.originalRequest.url)
            return .cancel(task)
        case .deliverThenPause(let drainedTo)?:
            // The next attempt asks for what follows this chunk once the consumer caught up.
            phase.attemptThrottled(.consumer)
            then = .pauseStream(task, buffer, drainedTo: drainedTo)
        case .deliver?, nil:
            break
        }
        received += Int64(data.count)
        if case .pauseStream = then { notePause(.consumer) }
        if case .none = then, let (observers, snapshot) = dueProgress(.download) {
            then = .progress(observers, snapshot)
        }
        return .streamChunk(buffer, data, then: then)
    }

    /// An attempt starts (`awaitingHead`), or its response head arrived: the clock of the
    /// stream's waits starts again (StreamBody.swift), and the timer is moved to the new limit,
    /// which may be shorter than the one it was set for.
    mutating func restartWaitClock(awaitingHead: Bool) {
        guard let next = stream?.waitRestarted(awaitingHead: awaitingHead, now: now) else { return }
        nextWaitCheck = next
    }
}
