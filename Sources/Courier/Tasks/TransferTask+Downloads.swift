import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads: the body goes into a partial file that is only ever appended to when a 206
/// proves the offset, error pages never touch it, transient failures continue by themselves,
/// and whatever cannot finish leaves resume data behind (in the error, and beside a fixed
/// partial file as a crash-safe record).
extension TransferTask {
    /// The most of an error page kept for the error's body.
    static let rejectedBodyLimit = 64 * 1024

    // MARK: - Response and body

    func downloadResponse(
        _ http: HTTPURLResponse, _ task: URLSessionTask, _ plan: DownloadPlan, _ state: inout State
    ) -> TransferAction {
        state.download.rejected = nil
        state.download.rejectedBody = Data()
        let offset = state.rangeOffset
        state.rangeOffset = nil
        var decision = RangeContinuation.replace
        if let offset {
            decision = RangeContinuation.decide(
                offset: offset, knownTotal: state.expectedToReceive, status: http.statusCode,
                contentRange: http.value(forHTTPHeaderField: "Content-Range"))
        }
        if decision == .alreadyComplete, let offset {
            // 416 for exactly the length on disk: the file is complete.
            state.ignoresBody = true
            state.response = http
            if let problem = openPartial(keeping: offset, plan, &state) { return fail(problem, task, &state) }
            return .none
        }
        guard plan.accepts(http.statusCode) else {
            // An error page never touches the partial file; its start travels in the error.
            state.download.rejected = http
            return .none
        }
        switch decision {
        case .append:
            state.response = http
            if state.expectedToReceive == nil {
                state.expectedToReceive = http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)?
                    .completeLength
            }
            if let problem = openPartial(keeping: offset ?? 0, plan, &state) { return fail(problem, task, &state) }
        case .replace, .alreadyComplete:
            // A full body (a 200 where a 206 was asked for means the resource changed or the
            // server ignores Range): start the file over, never append. The old record goes in
            // order with the writes, so one still queued cannot bring it back.
            if let record = plan.recordFile { writer?.remove([record]) }
            resetBody(&state)
            state.response = http
            state.validator = Self.strongValidator(of: http)
            state.expectedToReceive = Self.bodyLength(of: http)
            if let problem = openPartial(keeping: 0, plan, &state) { return fail(problem, task, &state) }
        case .restartWithoutRange:
            // The 206 does not prove where it starts: never splice, fetch it all again.
            resetBody(&state)
            state.current = nil
            return .restart(task, originalRequest)
        }
        if let expected = plan.policy.expectedLength, let total = state.expectedToReceive, total != expected {
            return fail(.integrity("the server announces \(total) bytes, \(expected) were expected", originalRequest.url),
                        task, &state)
        }
        // The record exists before any byte of this body is written.
        writeRecord(plan, &state, force: true)
        return .none
    }

    /// What became of a chunk.
    enum ChunkOutcome {
        case accepted
        /// Stop the transfer with this failure.
        case stop(CourierError)
        /// The disk fell behind: this attempt is no longer current; cancel it, the next one
        /// continues from the bytes accepted once the writer has caught up.
        case pause
    }

    /// Hands a chunk of a download to the writer.
    func downloadData(_ data: Data, _ plan: DownloadPlan, _ state: inout State) -> ChunkOutcome {
        state.download.bytesFromNetwork += Int64(data.count)
        if state.download.rejected != nil {
            let room = Self.rejectedBodyLimit - state.download.rejectedBody.count
            if room > 0 { state.download.rejectedBody.append(data.prefix(room)) }
            return .accepted
        }
        if state.download.partialFile == nil, let problem = openPartial(keeping: 0, plan, &state) { return .stop(problem) }
        let backlog = writer?.append(data) ?? 0
        state.received += Int64(data.count)
        if let expected = plan.policy.expectedLength, state.received > expected {
            return .stop(.integrity("more than the expected \(expected) bytes arrived", originalRequest.url))
        }
        if plan.recordFile != nil, state.download.lastRecordWrite.map({ .now - $0 >= plan.policy.recordInterval }) ?? true {
            writeRecord(plan, &state, force: false)
        }
        return backPressure(backlog, plan, &state)
    }

    private func fail(_ problem: CourierError, _ task: URLSessionTask, _ state: inout State) -> TransferAction {
        state.failure = problem
        return .cancel(task)
    }

    /// Hands the partial file to the writer, keeping its first `offset` bytes (the writer hashes
    /// them when a checksum is expected), or has the writer truncate the one it has.
    private func openPartial(keeping offset: Int64, _ plan: DownloadPlan, _ state: inout State) -> CourierError? {
        guard let writer else { return nil }
        if state.download.partialFile != nil {
            if offset == 0 { writer.truncate() }
            return nil
        }
        do {
            let target: DiskWriter.Target
            if let fixed = plan.partialFile ?? plan.resumeFrom?.partialFile {
                try ensureDirectory(fixed.deletingLastPathComponent(), plan)
                target = .existing(fixed, keeping: offset)
            } else {
                target = .fresh(StagingFile.randomURL(in: try stagingDirectory(for: plan)))
            }
            // Opening happens on the writer's queue; if it fails, the writer's failure stops the task.
            writer.open(target, hashing: plan.policy.expectedSHA256 != nil)
            state.download.partialFile = target.url
            state.received = offset
            return nil
        } catch {
            return error
        }
    }

    private func stagingDirectory(for plan: DownloadPlan) throws(CourierError) -> URL {
        let directory = plan.destination.stagingDirectory ?? settings.temporaryDirectory
        try ensureDirectory(directory, plan)
        return directory
    }

    private func ensureDirectory(_ directory: URL, _ plan: DownloadPlan) throws(CourierError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return
        }
        let destination = plan.destination
        let mayCreate =
            (destination.stagingDirectory == nil && plan.partialFile == nil)
            || destination.stagingOptions.contains(.createIntermediateDirectories)
        guard mayCreate else {
            throw CourierError(
                code: .destinationFailed,
                message: "the directory \(directory.path) does not exist (pass .createIntermediateDirectories to create it)",
                url: originalRequest.url)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CourierError(
                code: .destinationFailed, message: "cannot create the directory \(directory.path)",
                url: originalRequest.url, underlyingError: error)
        }
    }

    // MARK: - Completion

    func downloadCompletion(_ error: (any Error)?, _ plan: DownloadPlan, _ state: inout State) -> FollowUp {
        if state.lifecycle.state == .cancelling { return .finish(cancelledDownload(plan, &state)) }
        if let problem = state.failure { return .finish(completeLocked(&state, error: problem)) }
        var failure: CourierError?
        var retryable = false
        var retryAfter: String?
        if let rejected = state.download.rejected {
            failure = Self.statusError(rejected, body: state.download.rejectedBody, plan, request: state.currentRequest)
            retryable = plan.policy.retryableStatusCodes.contains(rejected.statusCode)
            retryAfter = rejected.value(forHTTPHeaderField: "Retry-After")
        } else if let error {
            failure = classify(error, state)
            retryable = failure.map(DownloadPolicy.isTransient) ?? false
        } else if !state.ignoresBody, let problem = integrityProblem(plan, state) {
            return .finish(completeLocked(&state, error: problem))
        }
        guard let failure else { return .finish(completeLocked(&state, error: nil)) }
        if retryable, state.download.retries < plan.policy.retryLimit, !core.isInvalidated {
            state.download.retries += 1
            writeRecord(plan, &state, force: true)
            let delay = plan.policy.retryDelay(attempt: state.download.retries, retryAfter: retryAfter)
            let request = nextAttempt(&state)
            state.current = nil
            state.awaitingRetry = true
            return .retry(request, delay)
        }
        if let ask = askRetriers(failure, &state) { return ask }
        return .finish(finishFailedDownload(failure, plan, &state))
    }

    /// Ends a failed download, keeping its bytes and attaching resume data when they can be continued.
    func finishFailedDownload(_ failure: CourierError, _ plan: DownloadPlan, _ state: inout State) -> Completion {
        completeLocked(&state, error: failure, keeping: resumeData(plan, state))
    }

    /// A cancelled download: kept for resuming when `cancel(producingResumeData:)` asked for it.
    func cancelledDownload(_ plan: DownloadPlan, _ state: inout State) -> Completion {
        let resume = state.download.producesResumeData ? resumeData(plan, state) : nil
        return completeLocked(&state, error: .cancelled(url: originalRequest.url), keeping: resume)
    }

    /// The length check; the SHA-256 is the writer's, checked once every byte is in the file.
    private func integrityProblem(_ plan: DownloadPlan, _ state: State) -> CourierError? {
        if let expected = plan.policy.expectedLength, state.received != expected {
            return .integrity("\(state.received) bytes arrived, \(expected) were expected", originalRequest.url)
        }
        return nil
    }

    static func statusError(_ response: HTTPURLResponse, body: Data, _ plan: DownloadPlan, request: URLRequest?)
        -> CourierError
    {
        do {
            try plan.validation.validate(request: request, response: response, data: body)
        } catch {
            return error
        }
        return CourierError(
            code: .unacceptableStatusCode, message: "the server answered HTTP \(response.statusCode)",
            url: request?.url, response: response, body: body)
    }

    // MARK: - The writer

    /// A write failed: the download stops with that error, once. A running attempt is cancelled
    /// and its completion reports the failure; between attempts (paused for the disk, waiting to
    /// retry, suspended) the task finishes now. Once the task is cancelling or complete, the
    /// writer's ending reports it instead.
    func writerFailed(_ error: CourierError) {
        enum Step { case none, cancel(URLSessionTask), finish(Completion) }
        let step = state.withLock { state -> Step in
            guard state.failure == nil else { return .none }
            switch state.lifecycle.state {
            case .running:
                state.failure = error
                if let current = state.current {
                    // A task still being launched is not registered yet: its launcher cancels it.
                    return current === state.launching ? .none : .cancel(current)
                }
            case .suspended:
                _ = state.lifecycle.apply(.cancel)
            case .initialized, .cancelling, .completed:
                return .none
            }
            state.awaitingRetry = false
            return .finish(completeLocked(&state, error: error))
        }
        switch step {
        case .none: break
        case .cancel(let task): core.cancel(task)
        case .finish(let completion): perform(completion)
        }
    }

    // MARK: - Resume data and records

    /// Resume data for the bytes held, or `nil` when they cannot be continued. Its `bytesOnDisk`
    /// is what has arrived; the writer replaces it with what the file really holds when it writes
    /// a record or ends the file, so neither ever claims a byte still waiting in memory.
    func resumeData(_ plan: DownloadPlan, _ state: State, allowEmpty: Bool = false) -> ResumeData? {
        guard let url = originalRequest.url,
            let partial = state.download.partialFile ?? plan.partialFile ?? plan.resumeFrom?.partialFile
        else { return nil }
        let method = (originalRequest.httpMethod ?? "GET").uppercased()
        let resumable =
            method == "GET" && !state.ignoresBody
            && (state.validator != nil || plan.policy.resumesWithoutValidator)
            && (state.received > 0 || allowEmpty)
        guard resumable else { return nil }
        return ResumeData(
            url: ResumeData.withoutCredentials(url), method: method,
            headers: ResumeData.storableHeaders(of: originalRequest, sensitive: plan.policy.sensitiveHeaders),
            partialFile: partial, bytesOnDisk: state.received, validator: state.validator,
            totalLength: state.expectedToReceive)
    }

    /// Brings the crash-safe record up to date (when the partial file has a fixed place): the
    /// writer flushes what it has written, then records exactly that.
    func writeRecord(_ plan: DownloadPlan, _ state: inout State, force: Bool) {
        guard let record = plan.recordFile else { return }
        if let resume = resumeData(plan, state, allowEmpty: force) { writer?.writeRecord(resume, to: record) }
        state.download.lastRecordWrite = .now
    }
}

extension CourierError {
    static func integrity(_ message: String, _ url: URL?) -> CourierError {
        CourierError(code: .integrityFailed, message: message + "; nothing was published", url: url)
    }
}
