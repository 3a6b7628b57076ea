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
            // server ignores Range): start the file over, never append.
            if let record = plan.recordFile { unlink(record.path) }
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

    /// Appends a chunk of a download; returns a failure that must stop the transfer.
    func downloadData(_ data: Data, _ plan: DownloadPlan, _ state: inout State) -> CourierError? {
        state.download.bytesFromNetwork += Int64(data.count)
        if state.download.rejected != nil {
            let room = Self.rejectedBodyLimit - state.download.rejectedBody.count
            if room > 0 { state.download.rejectedBody.append(data.prefix(room)) }
            return nil
        }
        if state.staging == nil, let problem = openPartial(keeping: 0, plan, &state) { return problem }
        do { try state.staging?.append(data) } catch { return error }
        state.download.hasher?.update(data)
        state.received += Int64(data.count)
        if let expected = plan.policy.expectedLength, state.received > expected {
            return .integrity("more than the expected \(expected) bytes arrived", originalRequest.url)
        }
        if plan.recordFile != nil, state.download.lastRecordWrite.map({ .now - $0 >= plan.policy.recordInterval }) ?? true {
            writeRecord(plan, &state, force: false)
        }
        return nil
    }

    private func fail(_ problem: CourierError, _ task: URLSessionTask, _ state: inout State) -> TransferAction {
        state.failure = problem
        return .cancel(task)
    }

    /// Opens the partial file keeping its first `offset` bytes (hashing them when a checksum is
    /// expected), or truncates the one already open.
    private func openPartial(keeping offset: Int64, _ plan: DownloadPlan, _ state: inout State) -> CourierError? {
        do {
            if let staging = state.staging {
                if offset == 0, staging.length > 0 { try staging.truncate() }
                return nil
            }
            if let fixed = plan.partialFile ?? plan.resumeFrom?.partialFile {
                try ensureDirectory(fixed.deletingLastPathComponent(), plan)
                state.staging = try StagingFile(at: fixed, keeping: offset)
            } else {
                state.staging = try StagingFile(in: try stagingDirectory(for: plan))
            }
            state.received = offset
            if offset > 0, state.download.hasher != nil, let staging = state.staging {
                state.download.hasher = try Self.hashPrefix(of: staging.url, length: offset)
            }
            return nil
        } catch {
            return error
        }
    }

    /// The SHA-256 state after the first `length` bytes of `file` (a resumed download's checksum
    /// covers the whole file, including what an earlier run wrote).
    static func hashPrefix(of file: URL, length: Int64) throws(CourierError) -> SHA256 {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            throw CourierError.fileSystem("cannot read the partial file to check it", url: file)
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var remaining = length
        while remaining > 0 {
            guard let chunk = try? handle.read(upToCount: Int(min(remaining, 1 << 20))), !chunk.isEmpty else {
                throw CourierError.fileSystem("the partial file is shorter than its record", url: file)
            }
            hasher.update(chunk)
            remaining -= Int64(chunk.count)
        }
        return hasher
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
        var failure = failure
        if let resume = resumeData(plan, &state) {
            failure.resumeData = resume
            return completeLocked(&state, error: failure, keepingPartial: true)
        }
        return completeLocked(&state, error: failure)
    }

    /// A cancelled download: kept for resuming when `cancel(producingResumeData:)` asked for it.
    func cancelledDownload(_ plan: DownloadPlan, _ state: inout State) -> Completion {
        var error = CourierError.cancelled(url: originalRequest.url)
        guard state.download.producesResumeData, let resume = resumeData(plan, &state) else {
            return completeLocked(&state, error: error)
        }
        error.resumeData = resume
        return completeLocked(&state, error: error, keepingPartial: true)
    }

    private func integrityProblem(_ plan: DownloadPlan, _ state: State) -> CourierError? {
        if let expected = plan.policy.expectedLength, state.received != expected {
            return .integrity("\(state.received) bytes arrived, \(expected) were expected", originalRequest.url)
        }
        if let expected = plan.policy.expectedSHA256, let hasher = state.download.hasher {
            let actual = hasher.finalize()
            if actual != expected {
                return .integrity(
                    "the SHA-256 is \(SHA256.hexString(actual)), \(SHA256.hexString(expected)) was expected",
                    originalRequest.url)
            }
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

    // MARK: - Resume data and records

    /// Resume data for the bytes held, after flushing them; also brings the record beside a
    /// fixed partial file up to date. `nil` when the bytes cannot be continued.
    func resumeData(_ plan: DownloadPlan, _ state: inout State, allowEmpty: Bool = false) -> ResumeData? {
        guard let url = originalRequest.url, let partial = state.staging?.url ?? plan.partialFile ?? plan.resumeFrom?.partialFile
        else { return nil }
        let method = (originalRequest.httpMethod ?? "GET").uppercased()
        let resumable =
            method == "GET" && !state.ignoresBody
            && (state.validator != nil || plan.policy.resumesWithoutValidator)
            && (state.received > 0 || allowEmpty)
        guard resumable else { return nil }
        do {
            try state.staging?.flush()
        } catch {
            return nil
        }
        // Never claim more than has been handed to the file.
        let bytes = state.staging?.length ?? state.received
        let data = ResumeData(
            url: ResumeData.withoutCredentials(url), method: method,
            headers: ResumeData.storableHeaders(of: originalRequest, sensitive: plan.policy.sensitiveHeaders),
            partialFile: partial, bytesOnDisk: bytes, validator: state.validator, totalLength: state.expectedToReceive)
        if let record = plan.recordFile {
            try? AtomicFile.write(data.encoded(), to: record)
            state.download.lastRecordWrite = .now
        }
        return data
    }

    /// Brings the crash-safe record up to date (when the partial file has a fixed place).
    func writeRecord(_ plan: DownloadPlan, _ state: inout State, force: Bool) {
        guard plan.recordFile != nil else { return }
        _ = resumeData(plan, &state, allowEmpty: force)
        state.download.lastRecordWrite = .now
    }

}

extension CourierError {
    static func integrity(_ message: String, _ url: URL?) -> CourierError {
        CourierError(code: .integrityFailed, message: message + "; nothing was published", url: url)
    }
}
