import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download's rules, decided on the transfer's state: the body goes into a partial file that is
/// only ever appended to when a 206 proves the offset, error pages never touch it, transient
/// failures continue by themselves, and whatever cannot finish leaves resume data behind (in the
/// error, and beside a fixed partial file as a crash-safe record). The file's own bookkeeping is
/// ``FileBody``'s. No rule here touches the disk: the file operations are queued, in the order
/// decided, in ``FileBody/diskRequests`` for the driver's writer.
extension TransferState {
    // MARK: - Response and body

    mutating func downloadResponse(
        _ http: HTTPURLResponse, _ task: URLSessionTask, _ plan: DownloadPlan
    ) -> TransferAction {
        file?.responseArrived()
        spanEnd = nil
        let offset = rangeOffset
        rangeOffset = nil
        // Lengths are Courier's to read: libcurl takes `0x5` for 0 and would end the body there.
        let contentLength: Int64?
        switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
        case .malformed(let value):
            return failAttempt(.invalidResponse("a malformed Content-Length (\(value.debugDescription))", http), task)
        case .impossible(let value):
            brokenAnswer = .impossibleLength(value, http)
            return .cancel(task)
        case .length(let length): contentLength = length
        case .absent: contentLength = nil
        }
        var decision = RangeContinuation.replace
        if let offset {
            decision = RangeContinuation.decide(
                offset: offset, knownTotal: expectedToReceive, validator: validator,
                answer: BodyFacts.answer(http, contentLength: contentLength))
        } else if http.statusCode == 206 {
            // Nothing says where a 206 to a request without Range starts: never take it as the file.
            return failAttempt(.invalidResponse("a 206 answered a request that asked for no range", http), task)
        }
        switch decision {
        case .invalid(let why):
            return failAttempt(.invalidResponse(why, http), task)
        case .restartWithoutRange(let why):
            // Never splice: fetch it all again, a bounded number of times.
            if let problem = startOver(.answerDidNotContinue(why, http)) { return failAttempt(problem, task) }
            return .restart(task, freshRequest())
        case .alreadyComplete:
            // 416 for exactly the length on disk, as every response said: the file is complete
            // (`decide` only runs for a request with an offset).
            let held = offset ?? 0
            if let expected = plan.policy.expectedLength, held != expected {
                return fail(.integrity("the file holds \(held) bytes, \(expected) were expected", context.originalRequest.url), task)
            }
            ignoresBody = true
            response = http
            openPartial(keeping: held, plan)
            return resolveDestinationIfDue(http, plan)
        case .append, .replace:
            break
        }
        guard plan.accepts(http.statusCode) else {
            // An error page never touches the partial file; its start travels in the error.
            file?.rejected = http
            return .none
        }
        var appends = false
        if case .append = decision { appends = true }
        let totalKnown =
            expectedToReceive != nil
            || http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)?.completeLength != nil
        if let problem = checkVerifiable(
            http, contentLength: contentLength, appendsRange: appends, totalKnown: totalKnown, plan)
        {
            return failAttempt(problem, task)
        }
        var split: SegmentMap?
        switch decision {
        case .append(let end):
            response = http
            spanEnd = end
            if expectedToReceive == nil {
                expectedToReceive =
                    http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)?
                    .completeLength
            }
            // A first 206 from byte 0 names the version its ranges belong to.
            if offset == 0, validator == nil { validator = BodyFacts.strongValidator(of: http) }
            switch segmentsToBegin(http, offset: offset ?? 0, end: end, plan) {
            case .none: break
            case .begin(let map): split = map
            case .restart(let why):
                if let problem = startOver(.answerDidNotContinue(why, http)) { return failAttempt(problem, task) }
                return .restart(task, freshRequest())
            }
            openPartial(keeping: offset ?? 0, plan)
        default:
            // A full body (a 200 where a 206 was asked for means the resource changed or the
            // server ignores Range): start the file over, never append.
            _ = startOver(.replacedByAnswer)
            response = http
            validator = BodyFacts.strongValidator(of: http)
            expectedToReceive = BodyFacts.isEncoded(http) ? nil : contentLength
            openPartial(keeping: 0, plan)
        }
        restarts = 0
        if let expected = plan.policy.expectedLength, let total = expectedToReceive, total != expected {
            return fail(
                .integrity("the server announces \(total) bytes, \(expected) were expected", context.originalRequest.url),
                task)
        }
        // The record exists before any byte of this body is written.
        writeRecord(plan, force: true)
        if let split { return .split(task, split, then: resolveDestinationIfDue(http, plan)) }
        return resolveDestinationIfDue(http, plan)
    }

    /// Applies the download's policy to a body nothing may prove complete (``FileBody/verify(_:url:response:)``).
    private mutating func checkVerifiable(
        _ http: HTTPURLResponse, contentLength: Int64?, appendsRange: Bool, totalKnown: Bool, _ plan: DownloadPlan
    ) -> CourierError? {
        let request = context.originalRequest
        let why = BodyFacts.unverifiableReason(
            http, contentLength: contentLength, appendsRange: appendsRange, totalKnown: totalKnown,
            method: (request.httpMethod ?? "GET").uppercased())
        return file?.verify(why, url: request.url, response: http)
    }

    /// The action that asks an `.atResponse` destination where the file goes, once per download.
    private func resolveDestinationIfDue(_ http: HTTPURLResponse, _ plan: DownloadPlan) -> TransferAction {
        guard let (destination, partial) = file?.destinationToResolve else { return .none }
        return .resolveDestination(destination, http, partial)
    }

    /// The one place a held body is dropped to begin again, whatever the task (Docs/Retries.md,
    /// "Starting over"): the bytes, a split download's segments, and a download's record that
    /// vouched for them. An answer that did not continue the bytes is counted: the failure once
    /// answers made the transfer start over more than ``FileBody/restartLimit`` times in a row,
    /// `nil` otherwise. The caller sends what follows (``freshRequest()`` to fetch it all again).
    mutating func startOver(_ cause: StartOverCause) -> CourierError? {
        // The record goes first, in order with the writes: none is left claiming bytes the
        // truncation drops, and one still queued cannot bring it back.
        if let record = file?.plan.recordFile { file?.diskRequests.append(.remove([record])) }
        resetBody()
        switch cause {
        case .answerDidNotContinue(let why, let answer):
            restarts += 1
            guard restarts <= FileBody.restartLimit else {
                return .invalidResponse("\(why), \(restarts) times in a row", answer)
            }
            phase.attemptReplaced()
        case .replacedByAnswer:
            restarts = 0
        case .cannotContinue:
            break
        }
        return nil
    }

    /// Fails this attempt before any of its body is appended; the bytes held stay resumable.
    mutating func failAttempt(_ problem: CourierError, _ task: URLSessionTask) -> TransferAction {
        failure = problem
        file?.keepsBytes = true
        return .cancel(task)
    }

    /// What became of a chunk.
    enum ChunkOutcome {
        case accepted
        /// Stop the transfer with this failure.
        case stop(CourierError)
        /// The disk fell behind: this attempt is no longer current; cancel it, the next one
        /// continues from the bytes accepted once the writer's backlog is down to `drainedTo`.
        case pause(drainedTo: Int64)
    }

    /// Queues a chunk of a download for the writer. `writerBacklog`: how far behind the disk was
    /// when the chunk came (the driver reads it before it locks).
    mutating func downloadData(_ data: Data, _ plan: DownloadPlan, writerBacklog: Int64) -> ChunkOutcome {
        file?.bytesFromNetwork += Int64(data.count)
        if file?.rejected != nil {
            file?.keepRejected(data)
            return .accepted
        }
        if file?.partialFile == nil { openPartial(keeping: 0, plan) }
        var data = data
        var overrun: CourierError?
        if let end = spanEnd, received + Int64(data.count) > end {
            // A 206 longer than its Content-Range: the bytes past the range are not the file's.
            data = data.prefix(Int(max(0, end - received)))
            overrun = .invalidResponse(
                "the 206 went on past the end of its range (byte \(end))", response)
        }
        var backlog: Int64 = 0
        if !data.isEmpty {
            file?.diskRequests.append(.append(data))
            backlog = writerBacklog + Int64(data.count)
        }
        received += Int64(data.count)
        if let overrun {
            file?.keepsBytes = true
            return .stop(overrun)
        }
        if let expected = plan.policy.expectedLength, received > expected {
            return .stop(.integrity("more than the expected \(expected) bytes arrived", context.originalRequest.url))
        }
        if plan.recordFile != nil, file?.lastRecordWrite.map({ now - $0 >= plan.policy.recordInterval }) ?? true {
            writeRecord(plan, force: false)
        }
        return backPressure(backlog, plan)
    }

    private mutating func fail(_ problem: CourierError, _ task: URLSessionTask) -> TransferAction {
        failure = problem
        return .cancel(task)
    }

    /// Asks the writer for the partial file, keeping its first `offset` bytes (the writer hashes
    /// them when a checksum is expected), or to truncate the one it has. Its directory is made (or
    /// found missing) on the writer's queue, just before; a failure of either stops the task
    /// through the writer's failure (TransferTask+Downloads.swift), as a write's does.
    private mutating func openPartial(keeping offset: Int64, _ plan: DownloadPlan) {
        guard file != nil else { return }
        if file?.partialFile != nil {
            if offset == 0 { file?.diskRequests.append(.truncate) }
            return
        }
        let target: DiskWriter.Target
        if let fixed = plan.partialFile ?? plan.resumeFrom?.partialFile {
            // A split download's segments hold bytes past the prefix: the file keeps them.
            target = .existing(fixed, keeping: max(offset, file?.segments?.highestWrittenOffset ?? 0))
        } else {
            target = .fresh(StagingFile.randomURL(in: plan.destination.stagingDirectory ?? context.temporaryDirectory))
        }
        // A fixed partial file's or a staging directory is created only when the caller allowed
        // it, or when it is Courier's own temporary directory.
        let mayCreate =
            (plan.destination.stagingDirectory == nil && plan.partialFile == nil)
            || plan.destination.stagingOptions.contains(.createIntermediateDirectories)
        let directory = DiskWriter.Request.directory(
            target.url.deletingLastPathComponent(), mayCreate: mayCreate, requestURL: context.originalRequest.url)
        file?.diskRequests.append(directory)
        file?.diskRequests.append(.open(target, hashing: plan.policy.expectedSHA256 != nil))
        file?.partialFile = target.url
        received = offset
    }

    // MARK: - Completion

    mutating func downloadCompletion(_ error: (any Error)?, _ plan: DownloadPlan, facts: AttemptFacts) -> TransferTask.FollowUp {
        let invalidated = facts.invalidated
        if phase.state == .cancelling { return .finish(cancelledDownload(plan)) }
        if let problem = failure {
            if file?.keepsBytes == true { return .finish(finishFailedDownload(problem, plan)) }
            return .finish(complete(error: problem))
        }
        var ended: CourierError?
        if let rejected = file?.rejected {
            ended = FileBody.statusError(rejected, body: file?.rejectedBody ?? Data(), plan, request: currentRequest)
        } else if let broken = brokenAnswer {
            ended = broken
        } else if let error {
            ended = classify(error, invalidated: invalidated)
        } else if !ignoresBody, let goal = expectedToReceive ?? spanEnd, received < goal {
            // The body ended short of what the server announced, without an error: a partial 206
            // is legal (RFC 9110 §14.2). Never publish it; ask for the rest.
            return continueShortBody(goal, plan, invalidated: invalidated)
        } else if !ignoresBody, let problem = integrityProblem(plan) {
            return .finish(complete(error: problem))
        }
        guard let ended else { return .finish(complete(error: nil)) }
        // The same retry decision as every task's (TransferState+Retry.swift), the download's own
        // policy first; nothing retries: the bytes held stay for resuming.
        return retryFollowUp(after: ended, facts: facts) ?? .finish(finishFailedDownload(ended, plan))
    }

    /// A body that ended at `received` of `goal` bytes continues with `Range` from there. Not
    /// a retry; but continuations that add nothing are bounded, and a body that cannot be
    /// continued fails, keeping what it holds.
    private mutating func continueShortBody(_ goal: Int64, _ plan: DownloadPlan, invalidated: Bool) -> TransferTask.FollowUp {
        let stalls = file?.endedShort(holding: received) ?? 0
        let problem = CourierError.invalidResponse(
            "the server ended the body at byte \(received) of the \(goal) it announced", response)
        guard stalls < FileBody.stallLimit, canContinueByRange(), !invalidated else {
            return .finish(finishFailedDownload(problem, plan))
        }
        metrics.endAttempt(.endedShort)
        metrics.nextKind = .continuation
        metrics.nextOwner = .continuation
        writeRecord(plan, force: true)
        let request = restartRequest()
        phase.attemptAwaitsRetry(pendingFailure: nil)
        return .retry(request, .zero, nil)
    }

    /// Ends a failed download, keeping its bytes and attaching resume data when they can be continued.
    mutating func finishFailedDownload(_ failure: CourierError, _ plan: DownloadPlan) -> TransferTask.Completion {
        complete(error: failure, keeping: resumeData(plan))
    }

    /// A cancelled download: kept for resuming when `cancel(producingResumeData:)` asked for it.
    mutating func cancelledDownload(_ plan: DownloadPlan) -> TransferTask.Completion {
        let resume = file?.producesResumeData == true ? resumeData(plan) : nil
        return complete(error: .cancelled(url: context.originalRequest.url), keeping: resume)
    }

    /// The length check (``FileBody/lengthProblem(received:announced:url:)``); the SHA-256 is the writer's.
    private func integrityProblem(_ plan: DownloadPlan) -> CourierError? {
        file?.lengthProblem(received: received, announced: expectedToReceive, url: context.originalRequest.url)
    }

    // MARK: - Resume data and records

    /// Resume data for the bytes held, or `nil` when they cannot be continued (``FileBody/resumeData(for:received:validator:totalLength:sensitiveHeaders:allowEmpty:)``).
    func resumeData(_ plan: DownloadPlan, allowEmpty: Bool = false) -> ResumeData? {
        file?.resumeData(
            for: context.originalRequest, received: received, validator: validator, totalLength: expectedToReceive,
            sensitiveHeaders: options.sensitiveHeaders, allowEmpty: allowEmpty)
    }

    /// Brings the crash-safe record up to date (when the partial file has a fixed place): the
    /// writer flushes what it has written, then records exactly that.
    mutating func writeRecord(_ plan: DownloadPlan, force: Bool) {
        guard let record = plan.recordFile else { return }
        if let resume = resumeData(plan, allowEmpty: force) { file?.diskRequests.append(.record(resume, record)) }
        file?.lastRecordWrite = now
    }

    /// Decides what a chunk that left `backlog` bytes waiting for the disk means for the attempt.
    mutating func backPressure(_ backlog: Int64, _ plan: DownloadPlan) -> ChunkOutcome {
        let limit = plan.policy.bufferLimit
        guard backlog > limit else { return .accepted }
        // The whole body is in: nothing more will arrive, and a pause would only ask for nothing.
        if let total = expectedToReceive, received >= total { return .accepted }
        guard canContinueByRange() else {
            let (ceiling, overflow) = limit.multipliedReportingOverflow(by: FileBody.unpausableBacklogFactor)
            guard !overflow, backlog > ceiling else { return .accepted }
            return .stop(.diskTooSlow(limit: limit, url: context.originalRequest.url))
        }
        phase.attemptThrottled(.disk)
        file?.diskPauses += 1
        notePause(.disk)
        return .pause(drainedTo: limit / 2)
    }
}
