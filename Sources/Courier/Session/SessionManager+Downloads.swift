import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionManager {
    /// A task that streams the body of `request` into a partial file and, once it is complete,
    /// valid and matches the policy's expectations, publishes it at `destination` with one rename.
    ///
    /// With a fixed destination (``DownloadDestination/file(_:options:)``) or a fixed
    /// ``DownloadPolicy/partialFile``, the partial file keeps a resume record beside it: if a
    /// previous download to the same place was interrupted, even by `kill -9`, this one continues
    /// where it stopped. Transient failures are retried per `policy`; a failure that remains
    /// carries ``CourierError/resumeData`` when the bytes can be continued.
    public func downloadTask(
        with request: URLRequest, to destination: DownloadDestination, policy: DownloadPolicy = .default,
        validation: Validation = .default, queue: CallbackQueue = .default,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> DownloadTask {
        let partialFile = policy.partialFile ?? destination.fixedURL.map(DownloadPolicy.defaultPartialFile(for:))
        let record = partialFile.flatMap { Self.usableRecord(beside: $0, for: request) }
        let plan = DownloadPlan(
            destination: destination, policy: policy, validation: validation, partialFile: partialFile,
            resumeFrom: record)
        return makeDownloadTask(request, plan: plan, queue: queue, progress: progress, completion: completion)
    }

    /// A task that continues the download described by `resumeData`: it asks for the rest with
    /// `Range` and `If-Range`, appends only to a 206 that proves the offset, and starts over if
    /// the resource changed. Pass `request` to supply credentials again (resume data never holds
    /// them); its URL must be the resume data's.
    public func downloadTask(
        resumingFrom resumeData: ResumeData, request: URLRequest? = nil, to destination: DownloadDestination,
        policy: DownloadPolicy = .default, validation: Validation = .default, queue: CallbackQueue = .default,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> DownloadTask {
        let resolved = request ?? Self.request(from: resumeData)
        let problem = Self.problem(resuming: resumeData, with: resolved)
        // Unusable resume data touches no file: it may point anywhere.
        let partialFile = problem == nil ? resumeData.partialFile : nil
        var policy = policy
        policy.partialFile = partialFile
        let plan = DownloadPlan(
            destination: destination, policy: policy, validation: validation, partialFile: partialFile,
            resumeFrom: problem == nil ? resumeData : nil)
        let task = makeDownloadTask(resolved, plan: plan, queue: queue, progress: progress, completion: completion)
        if let problem { task.transfer.fail(with: problem) }
        return task
    }

    private func makeDownloadTask(
        _ request: URLRequest, plan: DownloadPlan, queue: CallbackQueue, progress: (@Sendable (Progress) -> Void)?,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> DownloadTask {
        var settings = settings(for: queue)
        // Only under the download's own opt-in (DownloadPolicy.responseCache), never split.
        settings.cache = downloadCacheBinding(for: plan)
        let finisher = downloadFinisher(plan: plan, delivery: settings.delivery, cache: settings.cache, completion: completion)
        var options = taskOptions
        options.sensitiveHeaders.formUnion(plan.policy.sensitiveHeaders.map { $0.lowercased() })
        if let deadline = plan.policy.deadline { options.deadline = deadline }
        let transfer = TransferTask(
            core: core, request: prepared(request), kind: .download(plan), validation: plan.validation,
            options: options, settings: settings, events: events, finisher: finisher)
        let task = DownloadTask(transfer: transfer)
        if let progress { task.addProgressHandler(.download, progress) }
        transfer.prepare(handle: task)
        sweepSideFiles(for: plan)
        return task
    }

    // MARK: - Resume data checks

    static func request(from resumeData: ResumeData) -> URLRequest {
        var request = URLRequest(url: resumeData.url)
        request.httpMethod = resumeData.method
        for (name, value) in resumeData.headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Why `resumeData` cannot be continued with `request`, if it cannot: never append to a file
    /// that is not Courier's partial file, or holds fewer bytes than claimed.
    static func problem(resuming resumeData: ResumeData, with request: URLRequest) -> CourierError? {
        func invalid(_ why: String) -> CourierError {
            CourierError(code: .invalidResumeData, message: "cannot resume: \(why)", url: resumeData.url)
        }
        guard let url = request.url, ResumeData.withoutCredentials(url) == resumeData.url else {
            return invalid("the request's URL is not the resume data's")
        }
        guard resumeData.method.uppercased() == "GET" else { return invalid("only GET downloads can be resumed") }
        let partial = resumeData.partialFile
        guard partial.lastPathComponent.hasSuffix(".courier-partial") else {
            return invalid("\(partial.path) is not a Courier partial file")
        }
        // Checked on an open descriptor, as the writer checks it again before appending
        // (StagingFile.init(at:keeping:)): a link planted at the name is someone else's file.
        guard let info = SideFile.privateStatus(of: partial) else {
            return invalid(
                "the partial file \(partial.path) is gone or not a private regular file (one link, owned by this user)")
        }
        // A split download's segments hold bytes past the written prefix: the file must hold them all.
        let claimed = max(resumeData.bytesOnDisk, resumeData.segmentMap?.highestWrittenOffset ?? 0)
        guard Int64(info.st_size) >= claimed else {
            return invalid("the partial file holds \(info.st_size) bytes, fewer than the \(claimed) recorded")
        }
        return nil
    }

    /// The record beside `partialFile`, if it describes a download of `request` that can
    /// continue. A stale or damaged record (and its partial file) is removed: starting over is
    /// always safe, appending to bytes nothing vouches for is not. Removing only unlinks the
    /// names: a link planted at either leaves the file it leads to untouched.
    static func usableRecord(beside partialFile: URL, for request: URLRequest) -> ResumeData? {
        do {
            guard let record = try ResumeData.record(beside: partialFile) else { return nil }
            if problem(resuming: record, with: request) == nil { return record }
        } catch {
            // Unusable (damaged, a link, another file's record): removed below with its bytes.
        }
        unlink(DownloadPolicy.recordFile(for: partialFile).path)
        unlink(partialFile.path)
        return nil
    }

    // MARK: - Finishing

    /// Validation, integrity, destination and publishing on the processing queue, then one
    /// completion. The partial file is removed on every path that neither publishes it nor
    /// keeps it for resuming.
    func downloadFinisher(
        plan: DownloadPlan, delivery: Delivery, cache: CacheBinding? = nil,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> TransferTask.Finisher {
        let processingQueue = processingQueue
        let events = events
        let temporaryDirectory = temporaryDirectory
        return { outcome, handle in
            processingQueue.async {
                // A stored answer is staged here, and a stored body read from its staging file,
                // before the one publish path below.
                let outcome =
                    cache.map { Self.cacheSettled(outcome, cache: $0, plan: plan, temporaryDirectory: temporaryDirectory) } ?? outcome
                let result = Self.publish(outcome, plan: plan)
                if case .failure(let error) = result, error.resumeData == nil, let staged = outcome.stagedFile {
                    unlink(staged.path)
                }
                for file in outcome.obsoleteFiles { unlink(file.path) }
                let response = DownloadResponse(
                    request: outcome.request, response: outcome.response, result: result, report: outcome.report,
                    metrics: outcome.metrics)
                if let file = response.fileURL { events.emit(.published(file), for: handle) }
                events.emit(
                    .completed(
                        TaskCompletionEvent(
                            response: outcome.response, data: nil, value: response.fileURL, fileURL: response.fileURL,
                            error: response.error, metrics: outcome.metrics)), for: handle)
                delivery.run { completion(response) }
            }
        }
    }

    private static func publish(_ outcome: TransferOutcome, plan: DownloadPlan) -> Result<URL, CourierError> {
        if let error = outcome.error { return .failure(error) }
        let url = outcome.request.url
        guard let staged = outcome.stagedFile, let response = outcome.response else {
            return .failure(.noResponse(url: url))
        }
        do {
            // A 416 that proved the file complete is not an error status to validate.
            if !outcome.alreadyComplete {
                let isEmpty =
                    ((try? FileManager.default.attributesOfItem(atPath: staged.path)[.size]) as? NSNumber)?
                    .int64Value == 0
                do {
                    try plan.validation.validate(request: outcome.request, response: response, data: isEmpty ? Data() : nil)
                } catch {
                    // Never publish an error page; attach its beginning to the error instead.
                    throw error.adding(url: url, response: response, body: FilePublisher.prefix(of: staged))
                }
            }
            let (target, options): (URL, DownloadDestination.Options)
            do {
                (target, options) = try outcome.resolvedDestination ?? plan.destination.resolve(staged, response)
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError(
                    code: .destinationFailed, message: "the destination closure failed: \(error)", url: url,
                    response: response, underlyingError: error)
            }
            try FilePublisher.publish(staged, to: target, options: options, requestURL: url, handle: outcome.stagedHandle)
            return .success(target)
        } catch let error as CourierError {
            return .failure(error.adding(url: url, response: response, body: nil))
        } catch {
            return .failure(CourierError(code: .destinationFailed, message: "\(error)", url: url, response: response))
        }
    }
}

extension CourierTask where Kind == DownloadTransfer {
    /// Cancels the download and keeps what it received: `handler` gets resume data for
    /// ``SessionManager/downloadTask(resumingFrom:request:to:policy:validation:queue:progress:completion:)``,
    /// or `nil` when the bytes cannot be continued (nothing received, no validator). The task
    /// completes with ``CourierError/Code-swift.struct/cancelled`` carrying the same resume data.
    public func cancel(producingResumeData handler: @escaping @Sendable (ResumeData?) -> Void) {
        transfer.cancelProducingResumeData(handle: self, handler)
    }

    /// The connections the download uses now: 1 for one stream, more while a split download
    /// (``DownloadPolicy/split``) runs several, 0 before it starts and once it has ended.
    public var connectionCount: Int { transfer.connectionCount }
}
