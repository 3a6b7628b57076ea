import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads: the body goes into a partial file that is only ever appended to when a 206
/// proves the offset, error pages never touch it, transient failures continue by themselves,
/// and whatever cannot finish leaves resume data behind (in the error, and beside a fixed
/// partial file as a crash-safe record).
extension TransferTask {
    // MARK: - Response and body

    func downloadResponse(
        _ http: HTTPURLResponse, _ task: URLSessionTask, _ plan: DownloadPlan, _ state: inout State
    ) -> TransferAction {
        state.file?.responseArrived()
        state.spanEnd = nil
        let offset = state.rangeOffset
        state.rangeOffset = nil
        // Lengths are Courier's to read: libcurl takes `0x5` for 0 and would end the body there.
        let contentLength: Int64?
        switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
        case .malformed(let value):
            return failAttempt(.invalidResponse("a malformed Content-Length (\(value.debugDescription))", http), task, &state)
        case .length(let length): contentLength = length
        case .absent: contentLength = nil
        }
        var decision = RangeContinuation.replace
        if let offset {
            decision = RangeContinuation.decide(
                offset: offset, knownTotal: state.expectedToReceive, validator: state.validator,
                answer: Self.answer(http, contentLength: contentLength))
        } else if http.statusCode == 206 {
            // Nothing says where a 206 to a request without Range starts: never take it as the file.
            return failAttempt(.invalidResponse("a 206 answered a request that asked for no range", http), task, &state)
        }
        switch decision {
        case .invalid(let why):
            return failAttempt(.invalidResponse(why, http), task, &state)
        case .restartWithoutRange(let why):
            // Never splice: fetch it all again, a bounded number of times.
            state.restarts += 1
            resetBody(&state)
            guard state.restarts <= Self.restartLimit else {
                return failAttempt(
                    .invalidResponse("\(why), \(state.restarts) times in a row", http), task, &state)
            }
            state.phase.attemptReplaced()
            return .restart(task, originalRequest)
        case .alreadyComplete:
            // 416 for exactly the length on disk, as every response said: the file is complete
            // (`decide` only runs for a request with an offset).
            let held = offset ?? 0
            if let expected = plan.policy.expectedLength, held != expected {
                return fail(.integrity("the file holds \(held) bytes, \(expected) were expected", originalRequest.url), task, &state)
            }
            state.ignoresBody = true
            state.response = http
            if let problem = openPartial(keeping: held, plan, &state) { return fail(problem, task, &state) }
            return resolveDestinationIfDue(http, plan, &state)
        case .append, .replace:
            break
        }
        guard plan.accepts(http.statusCode) else {
            // An error page never touches the partial file; its start travels in the error.
            state.file?.rejected = http
            return .none
        }
        var appends = false
        if case .append = decision { appends = true }
        let totalKnown = state.expectedToReceive != nil
            || http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)?.completeLength != nil
        if let problem = checkVerifiable(
            http, contentLength: contentLength, appendsRange: appends, totalKnown: totalKnown, plan, &state)
        {
            return failAttempt(problem, task, &state)
        }
        switch decision {
        case .append(let end):
            state.response = http
            state.spanEnd = end
            if state.expectedToReceive == nil {
                state.expectedToReceive = http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)?
                    .completeLength
            }
            if let problem = openPartial(keeping: offset ?? 0, plan, &state) { return fail(problem, task, &state) }
        default:
            // A full body (a 200 where a 206 was asked for means the resource changed or the
            // server ignores Range): start the file over, never append. The old record goes in
            // order with the writes, so one still queued cannot bring it back.
            if let record = plan.recordFile { state.file?.writer.remove([record]) }
            resetBody(&state)
            state.response = http
            state.validator = Self.strongValidator(of: http)
            state.expectedToReceive = Self.isEncoded(http) ? nil : contentLength
            if let problem = openPartial(keeping: 0, plan, &state) { return fail(problem, task, &state) }
        }
        state.restarts = 0
        if let expected = plan.policy.expectedLength, let total = state.expectedToReceive, total != expected {
            return fail(.integrity("the server announces \(total) bytes, \(expected) were expected", originalRequest.url),
                        task, &state)
        }
        // The record exists before any byte of this body is written.
        writeRecord(plan, &state, force: true)
        return resolveDestinationIfDue(http, plan, &state)
    }

    /// How often in a row a download starts over because answers to `Range` did not continue
    /// its bytes, before it fails: a server that always answers so would loop forever.
    static let restartLimit = 3
    /// How many continuations in a row that add no byte a download makes before it fails.
    static let stallLimit = 3

    /// The parts of `http` a range decision reads.
    static func answer(_ http: HTTPURLResponse, contentLength: Int64?) -> RangeContinuation.Answer {
        RangeContinuation.Answer(
            status: http.statusCode, contentRange: http.value(forHTTPHeaderField: "Content-Range"),
            contentLength: contentLength, etag: http.value(forHTTPHeaderField: "ETag"),
            lastModified: http.value(forHTTPHeaderField: "Last-Modified"))
    }

    /// Why the body `http` announces cannot be proven complete, if it cannot: a content-encoded
    /// body has no length to check (libcurl decodes it, and a stream cut inside the compressed
    /// data ends without an error), nor has one that only the connection closing ends.
    /// A 206 that continues the bytes held proves its own span, but the file's end only with a
    /// complete length (its own, or an earlier response's): `bytes N-M/*` alone cannot say
    /// whether more follows.
    static func unverifiableReason(
        _ http: HTTPURLResponse, contentLength: Int64?, appendsRange: Bool, totalKnown: Bool, method: String
    ) -> String? {
        // No body by definition: nothing to prove.
        if http.statusCode == 204 || http.statusCode == 304 || method == "HEAD" { return nil }
        if isEncoded(http) {
            let encoding = http.value(forHTTPHeaderField: "Content-Encoding") ?? ""
            return "the server sent a \(encoding)-encoded body although identity was asked, so its length cannot be checked"
        }
        if appendsRange {
            return totalKnown ? nil : "no response announced the file's complete length (the 206 says bytes …/*)"
        }
        if contentLength == nil, !isChunked(http) {
            return "the server announced no length (no Content-Length, not chunked): only the connection closing ends the body"
        }
        return nil
    }

    /// Applies the policy for a body nothing can prove complete: fine when the caller can check
    /// it (an expected SHA-256 or length), published but marked unverified when the policy allows
    /// it, refused otherwise — before any of it is fetched.
    private func checkVerifiable(
        _ http: HTTPURLResponse, contentLength: Int64?, appendsRange: Bool, totalKnown: Bool, _ plan: DownloadPlan,
        _ state: inout State
    ) -> CourierError? {
        state.file?.unverified = false
        let method = (originalRequest.httpMethod ?? "GET").uppercased()
        guard
            let why = Self.unverifiableReason(
                http, contentLength: contentLength, appendsRange: appendsRange, totalKnown: totalKnown, method: method)
        else { return nil }
        let policy = plan.policy
        if policy.expectedSHA256 != nil || policy.expectedLength != nil { return nil }
        if policy.publishesUnverifiedBodies {
            state.file?.unverified = true
            return nil
        }
        return CourierError(
            code: .integrityFailed,
            message: why + "; nothing could prove it complete, so it was not downloaded (give an expected SHA-256 or "
                + "length, or set DownloadPolicy.publishesUnverifiedBodies)",
            url: originalRequest.url, response: http)
    }

    /// Whether `http`'s body is content-encoded (anything but `identity`).
    static func isEncoded(_ http: HTTPURLResponse) -> Bool {
        guard let encoding = http.value(forHTTPHeaderField: "Content-Encoding") else { return false }
        let trimmed = encoding.trimmingCharacters(in: .whitespaces).lowercased()
        return !trimmed.isEmpty && trimmed != "identity"
    }

    /// Whether `http`'s body is chunked: its last chunk proves it complete.
    static func isChunked(_ http: HTTPURLResponse) -> Bool {
        (http.value(forHTTPHeaderField: "Transfer-Encoding") ?? "").lowercased().contains("chunked")
    }

    /// The action that asks an `.atResponse` destination where the file goes, once per download.
    private func resolveDestinationIfDue(_ http: HTTPURLResponse, _ plan: DownloadPlan, _ state: inout State)
        -> TransferAction
    {
        guard plan.destination.timing == .atResponse, state.file?.resolvedDestination == nil,
            let partial = state.file?.partialFile
        else { return .none }
        return .resolveDestination(plan.destination, http, partial)
    }

    /// Calls an `.atResponse` destination closure (outside the lock, on the callback queue, so no
    /// data callback of this task runs before its answer is recorded) and checks its answer now:
    /// an existing file or a throwing closure stops the download, keeping its bytes.
    func resolveDestination(_ destination: DownloadDestination, _ response: HTTPURLResponse, _ partial: URL) {
        let problem: CourierError?
        do {
            let (url, options) = try destination.resolve(partial, response)
            state.withLock { $0.file?.resolvedDestination = (url, options) }
            problem = FilePublisher.existingFileProblem(at: url, options: options, requestURL: originalRequest.url)
        } catch let error as CourierError {
            problem = error
        } catch {
            problem = CourierError(
                code: .destinationFailed, message: "the destination closure failed: \(error)", url: originalRequest.url,
                response: response, underlyingError: error)
        }
        if let problem { stop(with: problem.adding(url: originalRequest.url, response: response, body: nil), keepingBytes: true) }
    }

    /// Fails this attempt before any of its body is appended; the bytes held stay resumable.
    func failAttempt(_ problem: CourierError, _ task: URLSessionTask, _ state: inout State) -> TransferAction {
        state.failure = problem
        state.file?.keepsBytes = true
        return .cancel(task)
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
        state.file?.bytesFromNetwork += Int64(data.count)
        if state.file?.rejected != nil {
            state.file?.keepRejected(data)
            return .accepted
        }
        if state.file?.partialFile == nil, let problem = openPartial(keeping: 0, plan, &state) { return .stop(problem) }
        var data = data
        var overrun: CourierError?
        if let end = state.spanEnd, state.received + Int64(data.count) > end {
            // A 206 longer than its Content-Range: the bytes past the range are not the file's.
            data = data.prefix(Int(max(0, end - state.received)))
            overrun = .invalidResponse(
                "the 206 went on past the end of its range (byte \(end))", state.response)
        }
        let backlog = data.isEmpty ? 0 : state.file?.writer.append(data) ?? 0
        state.received += Int64(data.count)
        if let overrun {
            state.file?.keepsBytes = true
            return .stop(overrun)
        }
        if let expected = plan.policy.expectedLength, state.received > expected {
            return .stop(.integrity("more than the expected \(expected) bytes arrived", originalRequest.url))
        }
        if plan.recordFile != nil, state.file?.lastRecordWrite.map({ .now - $0 >= plan.policy.recordInterval }) ?? true {
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
        guard let writer = state.file?.writer else { return nil }
        if state.file?.partialFile != nil {
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
            state.file?.partialFile = target.url
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
        if state.phase.state == .cancelling { return .finish(cancelledDownload(plan, &state)) }
        if let problem = state.failure {
            if state.file?.keepsBytes == true { return .finish(finishFailedDownload(problem, plan, &state)) }
            return .finish(completeLocked(&state, error: problem))
        }
        var failure: CourierError?
        if let rejected = state.file?.rejected {
            failure = Self.statusError(rejected, body: state.file?.rejectedBody ?? Data(), plan, request: state.currentRequest)
        } else if let error {
            failure = classify(error, state)
        } else if !state.ignoresBody, let goal = state.expectedToReceive ?? state.spanEnd, state.received < goal {
            // The body ended short of what the server announced, without an error: a partial 206
            // is legal (RFC 9110 §14.2). Never publish it; ask for the rest.
            return continueShortBody(goal, plan, &state)
        } else if !state.ignoresBody, let problem = integrityProblem(plan, state) {
            return .finish(completeLocked(&state, error: problem))
        }
        guard let failure else { return .finish(completeLocked(&state, error: nil)) }
        // The same retry decision as every task's (TransferTask+Retry.swift), the download's own
        // policy first; nothing retries: the bytes held stay for resuming.
        return retryFollowUp(after: failure, &state) ?? .finish(finishFailedDownload(failure, plan, &state))
    }

    /// A body that ended at `state.received` of `goal` bytes continues with `Range` from there. Not
    /// a retry; but continuations that add nothing are bounded, and a body that cannot be
    /// continued fails, keeping what it holds.
    private func continueShortBody(_ goal: Int64, _ plan: DownloadPlan, _ state: inout State) -> FollowUp {
        let stalls = state.file?.endedShort(holding: state.received) ?? 0
        let problem = CourierError.invalidResponse(
            "the server ended the body at byte \(state.received) of the \(goal) it announced", state.response)
        guard stalls < Self.stallLimit, canContinueByRange(state), !core.isInvalidated else {
            return .finish(finishFailedDownload(problem, plan, &state))
        }
        state.file?.continuations += 1
        state.metrics.endAttempt(.endedShort)
        state.metrics.nextKind = .continuation
        writeRecord(plan, &state, force: true)
        let request = restartRequest(&state)
        state.phase.attemptAwaitsRetry(pendingFailure: nil)
        return .retry(request, .zero, nil)
    }

    /// Ends a failed download, keeping its bytes and attaching resume data when they can be continued.
    func finishFailedDownload(_ failure: CourierError, _ plan: DownloadPlan, _ state: inout State) -> Completion {
        completeLocked(&state, error: failure, keeping: resumeData(plan, state))
    }

    /// A cancelled download: kept for resuming when `cancel(producingResumeData:)` asked for it.
    func cancelledDownload(_ plan: DownloadPlan, _ state: inout State) -> Completion {
        let resume = state.file?.producesResumeData == true ? resumeData(plan, state) : nil
        return completeLocked(&state, error: .cancelled(url: originalRequest.url), keeping: resume)
    }

    /// The length check; the SHA-256 is the writer's, checked once every byte is in the file.
    private func integrityProblem(_ plan: DownloadPlan, _ state: State) -> CourierError? {
        if let total = state.expectedToReceive, state.received != total {
            return .integrity("\(state.received) bytes arrived, the server announced \(total)", originalRequest.url)
        }
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

    /// A write failed: the download stops with that error, once. Its bytes are not kept: the
    /// file may not hold what was accepted.
    func writerFailed(_ error: CourierError) {
        stop(with: error, keepingBytes: false)
    }

    // MARK: - Resume data and records

    /// Resume data for the bytes held, or `nil` when they cannot be continued. Its `bytesOnDisk`
    /// is what has arrived; the writer replaces it with what the file really holds when it writes
    /// a record or ends the file, so neither ever claims a byte still waiting in memory.
    func resumeData(_ plan: DownloadPlan, _ state: State, allowEmpty: Bool = false) -> ResumeData? {
        guard let url = originalRequest.url,
            let partial = state.file?.partialFile ?? plan.partialFile ?? plan.resumeFrom?.partialFile
        else { return nil }
        let method = (originalRequest.httpMethod ?? "GET").uppercased()
        // A body a 416 proved complete is resumable too: its bytes are all there.
        let resumable =
            method == "GET"
            && (state.validator != nil || plan.policy.resumesWithoutValidator)
            && (state.received > 0 || allowEmpty)
        guard resumable else { return nil }
        let (headers, omitted) = ResumeData.storableHeaders(
            of: originalRequest, sensitive: state.options.sensitiveHeaders, recordingValues: plan.policy.recordsHeaders)
        var resume = ResumeData(
            url: ResumeData.withoutCredentials(url), method: method, headers: headers,
            partialFile: partial, bytesOnDisk: state.received, validator: state.validator,
            totalLength: state.expectedToReceive)
        resume.omittedHeaders = omitted
        return resume
    }

    /// Brings the crash-safe record up to date (when the partial file has a fixed place): the
    /// writer flushes what it has written, then records exactly that.
    func writeRecord(_ plan: DownloadPlan, _ state: inout State, force: Bool) {
        guard let record = plan.recordFile else { return }
        if let resume = resumeData(plan, state, allowEmpty: force) { state.file?.writer.writeRecord(resume, to: record) }
        state.file?.lastRecordWrite = .now
    }
}

extension CourierError {
    static func invalidResponse(_ message: String, _ response: HTTPURLResponse?) -> CourierError {
        CourierError(code: .invalidResponse, message: message + "; nothing was published", response: response)
    }

    static func integrity(_ message: String, _ url: URL?) -> CourierError {
        CourierError(code: .integrityFailed, message: message + "; nothing was published", url: url)
    }
}
