import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferTask: TaskDelegate {
    func urlTask(_ task: URLSessionTask, didReceive response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        // Interim responses (`100 Continue` of a streamed upload) reach this callback on Linux
        // (PLATFORM §2.1); only a final response starts a body.
        if (100..<200).contains(http.statusCode) { return }
        enum Action { case none, cancel(URLSessionTask), restart(URLRequest) }
        let action = state.withLock { state -> Action in
            guard state.current === task, state.lifecycle.state == .running else { return .none }
            let decision: RangeContinuation
            if let offset = state.rangeOffset {
                decision = RangeContinuation.decide(
                    offset: offset, knownTotal: state.expectedToReceive, status: http.statusCode,
                    contentRange: http.value(forHTTPHeaderField: "Content-Range"))
            } else {
                decision = .replace
            }
            state.rangeOffset = nil
            switch decision {
            case .append:
                state.response = http
            case .alreadyComplete:
                state.ignoresBody = true
            case .restartWithoutRange:
                // The 206 does not prove where it starts: never splice, fetch it all again.
                resetBody(&state)
                state.current = nil
                return .restart(originalRequest)
            case .replace:
                // A new final response on the same task (a 401 answered, a redirect) starts a
                // new body: keeping the old bytes would mix bodies (PLATFORM §5.4).
                resetBody(&state)
                state.response = http
                state.validator = Self.strongValidator(of: http)
                state.expectedToReceive = Self.bodyLength(of: http)
                if let problem = prepareBody(&state, expectedLength: state.expectedToReceive) {
                    state.failure = problem
                    return .cancel(task)
                }
            }
            return .none
        }
        switch action {
        case .none: break
        case .cancel(let task): task.cancel()
        case .restart(let request):
            task.cancel()
            startAttempt(request)
        }
    }

    func urlTask(_ task: URLSessionTask, didReceive data: Data) {
        enum Action { case none, cancel(URLSessionTask), progress([ProgressObserver], Progress) }
        let action = state.withLock { state -> Action in
            guard state.current === task, state.lifecycle.state == .running, state.failure == nil,
                !state.ignoresBody
            else { return .none }
            if let problem = appendBody(data, to: &state) {
                state.failure = problem
                return .cancel(task)
            }
            guard let (observers, snapshot) = dueProgress(.download, &state) else { return .none }
            return .progress(observers, snapshot)
        }
        switch action {
        case .none: break
        case .cancel(let task): task.cancel()
        case .progress(let observers, let snapshot): deliver(snapshot, to: observers)
        }
    }

    func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64) {
        let due = state.withLock { state -> ([ProgressObserver], Progress)? in
            guard state.current === task, state.lifecycle.state == .running else { return nil }
            state.sent += bytesSent
            return dueProgress(.upload, &state)
        }
        if let (observers, snapshot) = due { deliver(snapshot, to: observers) }
    }

    func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream? {
        guard case .upload(.stream(_, let makeStream)) = kind else { return nil }
        do {
            return try makeStream()
        } catch {
            // Answering nil makes URLSession send an empty body without any error (PLATFORM
            // §2.1), so fail the task ourselves.
            let problem = CourierError(
                code: .uploadSourceFailed, message: "the upload stream could not be created: \(error)",
                url: originalRequest.url, underlyingError: error)
            state.withLock { if $0.failure == nil { $0.failure = problem } }
            // This callback runs synchronously on FoundationNetworking's internal work queue, and
            // `cancel()` does a `sync` onto that queue: called from here it traps. Cancel from
            // elsewhere; the recorded failure decides the outcome whatever finishes first.
            DispatchQueue.global().async { task.cancel() }
            return nil
        }
    }

    func urlTask(_ task: URLSessionTask, willRedirectTo request: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        request
    }

    func urlTaskDidRejectChallenge(_ task: URLSessionTask) {
        state.withLock { state in
            if state.current === task { state.challengeRejected = true }
        }
    }

    func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let completion = state.withLock { state -> Completion? in
            guard state.current === task else { return nil }  // a stopped attempt
            let failure: CourierError?
            if state.lifecycle.state == .cancelling {
                // Manager-side flag: a cancelled task can still finish with no error (PLATFORM §2.8).
                failure = .cancelled(url: originalRequest.url)
            } else if let problem = state.failure {
                failure = problem
            } else if let error {
                failure = classify(error, state)
            } else {
                failure = nil
            }
            return completeLocked(&state, error: failure)
        }
        if let completion { perform(completion) }
    }

    private func classify(_ error: any Error, _ state: State) -> CourierError? {
        let isCancel = (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorCancelled
        if isCancel, state.challengeRejected, state.response?.statusCode == 401 {
            // The challenge was refused for want of a credential: report the 401 itself.
            return nil
        }
        if isCancel, core.isInvalidated { return .sessionInvalidated(url: originalRequest.url) }
        return .transport(error, url: originalRequest.url, response: state.response)
    }

    // MARK: - Body

    private func prepareBody(_ state: inout State, expectedLength: Int64?) -> CourierError? {
        if case .download(let destination) = kind {
            guard state.staging == nil else { return nil }
            do {
                state.staging = try StagingFile(in: try stagingDirectory(for: destination))
            } catch {
                return error
            }
            return nil
        }
        if let expectedLength, expectedLength > Int64(settings.maximumResponseSize) {
            return .responseTooLarge(url: originalRequest.url, limit: settings.maximumResponseSize, response: state.response)
        }
        if let expectedLength, expectedLength > 0, state.memory.isEmpty {
            state.memory.reserveCapacity(Int(expectedLength))
        }
        return nil
    }

    private func appendBody(_ data: Data, to state: inout State) -> CourierError? {
        if case .download = kind {
            if state.staging == nil, let problem = prepareBody(&state, expectedLength: nil) { return problem }
            do { try state.staging?.append(data) } catch { return error }
        } else {
            // URLSession on Linux has no back-pressure and decodes gzip without limit: the cap
            // on decoded bytes is the only bound on memory.
            guard state.received + Int64(data.count) <= Int64(settings.maximumResponseSize) else {
                return .responseTooLarge(
                    url: originalRequest.url, limit: settings.maximumResponseSize, response: state.response)
            }
            state.memory.append(data)
        }
        state.received += Int64(data.count)
        return nil
    }

    private func stagingDirectory(for destination: DownloadDestination) throws(CourierError) -> URL {
        let directory = destination.stagingDirectory ?? settings.temporaryDirectory
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return directory
        }
        let mayCreate =
            destination.stagingDirectory == nil || destination.stagingOptions.contains(.createIntermediateDirectories)
        guard mayCreate else {
            throw CourierError(
                code: .destinationFailed,
                message: "the destination directory \(directory.path) does not exist (pass .createIntermediateDirectories to create it)",
                url: originalRequest.url)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CourierError(
                code: .destinationFailed, message: "cannot create the directory \(directory.path)",
                url: originalRequest.url, underlyingError: error)
        }
        return directory
    }

    // MARK: - Response facts

    /// The body length in bytes as they will arrive. Unknown when the body is encoded:
    /// `expectedContentLength` is the compressed size but URLSession delivers decoded bytes.
    static func bodyLength(of response: HTTPURLResponse) -> Int64? {
        guard response.value(forHTTPHeaderField: "Content-Encoding") == nil,
            response.expectedContentLength >= 0
        else { return nil }
        return response.expectedContentLength
    }

    /// A validator that makes `If-Range` safe: a strong ETag, else `Last-Modified`. Nothing when
    /// the body is content-encoded (offsets would count decoded bytes).
    static func strongValidator(of response: HTTPURLResponse) -> String? {
        guard response.value(forHTTPHeaderField: "Content-Encoding") == nil else { return nil }
        if let etag = response.value(forHTTPHeaderField: "ETag"), !etag.hasPrefix("W/"), etag.hasPrefix("\"") {
            return etag
        }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }
}

