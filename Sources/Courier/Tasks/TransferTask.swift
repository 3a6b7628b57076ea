import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// The per-task delegate: drives one Courier task (data, upload or download) from creation to
/// its single completion.
///
/// It accumulates the body (in memory, or in a private staging file for downloads), computes
/// progress from byte counts (URLSession's own `Progress` is unusable on Linux, Docs/Platform.md §2.8),
/// and implements pause and resume itself: `suspend()` cancels the current URLSession task and
/// `resume()` asks for the rest with `Range`/`If-Range`, because URLSession's `suspend()` re-sends
/// the request from byte 0 and appends duplicate bytes (Docs/Platform.md §2.8). It is a driver: every
/// mutable field is in one ``TransferState`` behind one lock, whose `mutating` decisions return what
/// must be done, and the task does it after the lock is released (TransferState.swift).
final class TransferTask: Sendable {
    enum Kind: Sendable {
        case data
        case upload(UploadBody)
        case download(DownloadPlan)
        /// A body handed to a consumer as it arrives (Sources/Courier/Streaming).
        case stream(StreamBuffer, StreamPolicy)
    }

    /// Per-task settings resolved from the manager's configuration when the task is created.
    struct Settings: Sendable {
        let maximumResponseSize: Int
        let progressInterval: Duration
        let delivery: Delivery
        let temporaryDirectory: URL
        /// How long an attempt waits for a route to its host (TransferTask+Connectivity.swift).
        var waitsForConnectivity: Duration? = nil
        var networkMonitor: NetworkMonitor = .shared
        /// The manager's response cache, for data and upload tasks only (Sources/Courier/Cache).
        var cache: CacheBinding? = nil
    }

    /// Runs once with the outcome; builds the typed response and dispatches the completion.
    typealias Finisher = @Sendable (TransferOutcome, (any SessionTask)?) -> Void

    let core: SessionCore
    let originalRequest: URLRequest
    /// The first attempt's request: the original, or for a resumed download the rest of the body.
    let initialRequest: URLRequest
    let kind: Kind
    /// An upload's body (`nil` for other kinds): what URLSession task an attempt is.
    let upload: UploadBody?
    /// Which responses count as success; a failure the retriers are asked about.
    let validation: Validation
    let settings: Settings
    let events: EventDispatcher
    private let finisher: Finisher
    let state: Locked<State>
    /// A download's writer (`nil` for other kinds): the driver's; the decisions queue
    /// ``DiskWriter/Request``s that ``locked(_:)`` hands over (FileBody.swift).
    let writer: DiskWriter?
    /// The deadline's and the stream's timers: the driver's, never the state's (TaskTimers.swift).
    let timers = TaskTimers()

    typealias State = TransferState

    /// An upload body Courier encoded itself.
    enum EncodedBody: Sendable {
        case data(Data)
        /// A temporary file, locked against the sweep of abandoned side files for as long as the handle lives.
        case file(URL, SideFile.Handle)
    }

    init(
        core: SessionCore, request: URLRequest, kind: Kind, validation: Validation, options: TaskOptions,
        settings: Settings, events: EventDispatcher, finisher: @escaping Finisher
    ) {
        self.core = core
        self.kind = kind
        self.validation = validation
        self.settings = settings
        self.events = events
        self.finisher = finisher
        // The one place the kind is looked at: each kind's body is made here, and from then on
        // the driver asks the body (FileBody, StreamBody, the upload's UploadBody), never the kind.
        var request = request
        var upload: UploadBody?
        var stream: StreamBody?
        var file: FileBody?
        var writer: DiskWriter?
        switch kind {
        case .data:
            break
        case .upload(let body):
            upload = body
            if case .multipart(let form, _) = body, request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            }
        case .stream(let buffer, let policy):
            stream = StreamBody(buffer: buffer, policy: policy)
            if policy.overflow == .pause, request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
                // Pausing continues with Range, which needs offsets in the representation's own bytes.
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            }
        case .download(let plan):
            // The file must hold the representation's own bytes: offsets and checksums mean
            // nothing over a body libcurl decoded (Docs/Platform.md §2.7).
            if request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            }
            // Appends wake the writer per 256 KiB (the staging file's own buffer), or sooner for a small limit.
            writer = DiskWriter(
                batchBytes: Int(min(256 * 1024, plan.policy.bufferLimit / 2)), callQueue: core.callQueue,
                simulation: plan.policy.simulatedDisk)
            file = FileBody(plan: plan)
        }
        self.upload = upload
        self.originalRequest = request
        // Built in its lock, never copied: the state is a few kilobytes.
        let state = Locked(
            State(
                context: State.Context(
                    originalRequest: request, upload: upload, validation: validation,
                    maximumResponseSize: settings.maximumResponseSize, progressInterval: settings.progressInterval,
                    temporaryDirectory: settings.temporaryDirectory, emitsEvents: events.isActive, tls: core.tls,
                    waitsForConnectivity: settings.waitsForConnectivity != nil),
                options: options, now: .now))
        self.initialRequest = state.withLock { initial in
            initial.stream = stream
            initial.file = file
            initial.expectedToSend = upload?.expectedLength
            if let resume = file?.plan.resumeFrom, resume.bytesOnDisk > 0 || resume.segmentMap != nil {
                initial.received = resume.bytesOnDisk
                initial.validator = resume.validator
                initial.expectedToReceive = resume.totalLength
                initial.file?.resumedBytes = resume.segmentMap?.writtenBytes ?? resume.bytesOnDisk
                // A split download's record continues every segment (TransferState+Segments.swift).
                initial.file?.segments = resume.segmentMap
                return initial.rangeRequest(request, from: resume.bytesOnDisk, validator: resume.validator)
            } else if file?.plan.policy.split.isSplit == true {
                // A split download's first request asks for a range: only a 206 proves ranges work.
                return initial.rangeRequest(request, from: 0, validator: nil)
            }
            return request
        }
        self.writer = writer
        self.state = state
        writer?.setFailureHandler { [weak self] error in self?.writerFailed(error) }
    }

    /// Runs a decision on the state under the lock, then, before unlocking, queues the events it
    /// decided for the monitors and hands the file operations it decided to the writer (both only
    /// enqueue), so they keep the order the lock gives them.
    func locked<Result>(_ body: (inout State) -> Result) -> Result {
        // The time a decision takes as its own (TransferState.now): read here, never in it.
        let now = ContinuousClock.now
        return state.withLock { state in
            state.now = now
            let result = body(&state)
            if let move = state.nextWaitCheck {
                // Moved before unlocking, as the events are queued: two decisions on two threads
                // must not move the timer in the other order (a head's short idle limit overtaken
                // by an older, longer check would go unenforced). Only libdispatch is called.
                state.nextWaitCheck = nil
                timers.moveWait(after: move)
            }
            if !state.outbox.isEmpty {
                for (event, handle) in state.outbox { events.emit(event, for: handle) }
                state.outbox.removeAll(keepingCapacity: true)
            }
            // The file operations decided, to the writer in the lock's order (it only queues them).
            // Read in place, so emptying keeps the buffer rather than copying it on every chunk.
            if state.file?.diskRequests.isEmpty == false, let writer {
                for request in state.file?.diskRequests ?? [] { writer.perform(request) }
                state.file?.diskRequests.removeAll(keepingCapacity: true)
            }
            return result
        }
    }

    // MARK: - Creation

    /// Attaches the public handle and gives the task its identifier. The URLSession task is made
    /// when the task starts, after the adapters have seen the request. A task that cannot run
    /// (invalidated manager, unreadable upload file) completes at once.
    func prepare(handle: any SessionTask) {
        let identifier = core.nextTaskIdentifier()
        locked {
            $0.handle = handle
            $0.taskIdentifier = identifier
            $0.currentRequest = initialRequest
        }
        events.emit(.created, for: handle)
        if let problem = preflightProblem() {
            // Nothing was touched: an earlier run's partial file and record stay for the next.
            return fail(with: problem, handle: handle, keepingBytes: true)
        }
        if core.isInvalidated { fail(with: .sessionInvalidated(url: originalRequest.url), handle: handle) }
    }

    private func preflightProblem() -> CourierError? {
        guard originalRequest.url != nil else {
            return CourierError(code: .invalidRequest, message: "the request has no URL")
        }
        if case .file(let url)? = upload {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            if !exists || isDirectory.boolValue || !FileManager.default.isReadableFile(atPath: url.path) {
                let reason = !exists ? "does not exist" : (isDirectory.boolValue ? "is a directory" : "is not readable")
                return CourierError(
                    code: .uploadSourceFailed, message: "the upload file \(url.path) \(reason)", url: originalRequest.url)
            }
        }
        if let plan = locked({ $0.file?.plan }), let fixed = plan.destination.fixedURL,
            let problem = FilePublisher.existingFileProblem(
                at: fixed, options: plan.destination.stagingOptions, requestURL: originalRequest.url)
        {
            // Found before anything is fetched, rather than after the whole body.
            return problem
        }
        if case .multipart(let form, _)? = upload {
            do {
                _ = try form.contentLength()  // a missing or unreadable file part fails now, not mid-upload
            } catch {
                return error.adding(url: originalRequest.url, response: nil, body: nil)
            }
        }
        return nil
    }

    func makeURLSessionTask(for request: URLRequest, encoded: EncodedBody?, in session: URLSession) -> URLSessionTask {
        switch (upload, encoded) {
        case (.data(let data)?, _), (.multipart?, .data(let data)?):
            return session.uploadTask(with: request, from: data)
        case (.file(let url)?, _), (.multipart?, .file(let url, _)?):
            return session.uploadTask(with: request, fromFile: url)
        case (.stream?, _):
            return session.uploadTask(withStreamedRequest: request)
        // Data, download and stream tasks: a data task, whose body Courier handles itself.
        case (nil, _), (.multipart?, nil):
            return session.dataTask(with: request)
        }
    }

    private static func encode(_ form: MultipartFormData, threshold: Int64, into file: URL) -> Result<EncodedBody, CourierError> {
        do {
            if try form.contentLength() <= threshold { return .success(.data(try form.encoded())) }
            return .success(.file(file, try form.writeLocked(to: file)))
        } catch {
            return .failure(error)
        }
    }

    /// Encodes a multipart body on a queue of its own (it may write a large file: never on the
    /// global pool, which runs the manager's callbacks); `true` when the attempt must wait for it.
    private func encodeMultipartIfNeeded(then request: URLRequest) -> Bool {
        guard case .multipart(let form, let threshold)? = upload,
            locked({ $0.encodedBody == nil })
        else { return false }
        let temporary = settings.temporaryDirectory.appendingPathComponent(".courier-\(UUID().uuidString.lowercased()).multipart")
        DispatchQueue(label: "courier.multipart-encoding").async { [self] in
            switch Self.encode(form, threshold: threshold, into: temporary) {
            case .success(let body):
                let kept = locked { state -> Bool in
                    guard state.phase.state != .completed else { return false }
                    state.encodedBody = body
                    return true
                }
                if !kept, case .file(let url, _) = body { unlink(url.path) }  // the task ended meanwhile
                if kept { startAttempt(request) }
            case .failure(let error):
                fail(with: error.adding(url: request.url, response: nil, body: nil))
            }
        }
        return true
    }

    // MARK: - Public operations

    func resume(handle: any SessionTask) {
        let step = locked { $0.resumeRequested(handle: handle, initialRequest: initialRequest) }
        switch step {
        case .none:
            return
        case .cannotContinue:
            fail(with: .streamCannotContinue(url: originalRequest.url), handle: handle)
        case .start(let request, let first):
            if first {
                core.live.add(self)
                armDeadline()
                armIdleTimer()
            }
            // Before the attempt, whose own events follow.
            events.emit(.resumed, for: handle)
            startAttempt(request)
        }
    }

    func suspend(handle: any SessionTask) {
        guard let stopped = locked({ $0.suspendRequested(handle: handle) }) else { return }
        guard core.mayPause else {
            if let stopped { core.cancel(stopped) }
            return fail(with: .sessionInvalidated(url: originalRequest.url), handle: handle)
        }
        // Cancel, never `URLSessionTask.suspend()`: see the type's documentation. The cancelled
        // attempt's remaining callbacks are ignored because it is no longer `current`.
        if let stopped { core.cancel(stopped) }
        stopSegments()
    }

    func cancel(handle: any SessionTask) {
        perform(locked { $0.cancelRequested() })
        stopSegments()
    }

    /// Cancels a download, keeping what it holds and handing back resume data (`nil` when the
    /// bytes cannot be continued: no validator, nothing received, not a GET).
    func cancelProducingResumeData(handle: any SessionTask, _ handler: @escaping @Sendable (ResumeData?) -> Void) {
        let accepted = locked { state -> Bool in
            guard state.file != nil, state.phase.state != .completed, state.phase.state != .cancelling else {
                return false
            }
            state.file?.producesResumeData = true
            state.file?.resumeDataHandler = handler
            return true
        }
        if accepted { cancel(handle: handle) } else { settings.delivery.withoutGroup.run { handler(nil) } }
    }

    /// Stops the task with `error`, once, from outside its callbacks (a write failed, the deadline
    /// passed). A running attempt is cancelled and its completion reports the failure; between
    /// attempts (paused for the disk, waiting to retry, suspended) the task finishes now. With
    /// `keepingBytes`, a download keeps what it holds for resuming. Once the task is cancelling or
    /// complete, nothing happens.
    func stop(with error: CourierError, keepingBytes: Bool) {
        perform(locked { $0.stopRequested(error, keepingBytes: keepingBytes) })
        stopSegments()
    }

    private func perform(_ step: State.StopStep) {
        switch step {
        case .none: break
        case .cancel(let task): core.cancel(task)
        case .finish(let completion): perform(completion)
        }
    }

    /// Starts the deadline's clock, on the first `resume()`.
    private func armDeadline() {
        guard let deadline = locked({ $0.options.deadline }) else { return }
        let seconds = deadline.seconds
        // A timer source, cancelled when the task completes: an `asyncAfter` would stay queued
        // (closure and all) until its deadline, however long after the task that is.
        let timer = DispatchSource.makeTimerSource(queue: core.callQueue)
        timer.schedule(deadline: .now() + max(0, seconds))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let error = CourierError(
                code: .deadlineExceeded,
                message: "the task did not finish within its deadline of \(Self.describe(seconds)) s", url: originalRequest.url)
            stop(with: error, keepingBytes: true)
        }
        let armed = locked { $0.phase.state != .completed } && timers.keepDeadline(timer)
        if armed { timer.resume() }
    }

    private static func describe(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.3g", seconds)
    }

    /// Completes the task at once with `error`, whatever state it is in (if not completed). With
    /// `keepingBytes`, a download keeps what it holds (an earlier run's bytes) for resuming.
    func fail(with error: CourierError, handle: (any SessionTask)? = nil, keepingBytes: Bool = false) {
        stopSegments()
        if let completion = locked({ $0.finishRequested(error, handle: handle, keepingBytes: keepingBytes) }) {
            perform(completion)
        }
    }

    // MARK: - Attempts

    /// Registers and resumes `task`, then looks again: if the task was cancelled or paused while
    /// it was being launched, its URLSession task is cancelled now that its completion can be
    /// routed (a completion for an unregistered task would be lost, and the task never finish).
    private func launch(_ task: URLSessionTask, origin: String) {
        guard core.start(task, origin: origin, delegate: self) else {
            return fail(with: .sessionInvalidated(url: originalRequest.url))
        }
        let abandoned = locked { state -> Bool in
            state.file?.attempts += 1
            // A failure recorded meanwhile (a download's write error) stops the attempt too.
            return state.phase.launchFinished(task, failureRecorded: state.failure != nil)
        }
        if abandoned { task.cancel() }
    }

    /// Starts an attempt: the adapters see the request first, then a URLSession task is made,
    /// registered and resumed.
    func startAttempt(_ request: URLRequest, adapting: Bool = true) {
        if encodeMultipartIfNeeded(then: request) { return }
        let (interceptor, attempt) = locked { ($0.options.interceptor, $0.attempt) }
        guard adapting, let interceptor, !interceptor.adapters.isEmpty else { return createAttempt(request) }
        interceptor.adapt(request, attempt: attempt) { [self] result in
            switch result {
            case .success(let adapted):
                if events.isActive {
                    events.emit(
                        .adapted(TaskAdaptationEvent(original: request, adapted: adapted, attempt: attempt)),
                        for: locked { $0.retainedHandle ?? $0.handle })
                }
                createAttempt(adapted)
            case .failure(let error):
                fail(
                    with: CourierError(
                        code: .adaptationFailed, message: "a request adapter refused the request: \(error)",
                        url: request.url, underlyingError: error))
            }
        }
    }

    private func createAttempt(_ given: URLRequest) {
        var request: URLRequest
        do {
            // CR/LF in a header, a bad name, a non-http URL, a GET with a body: refused before
            // anything is sent.
            try RequestValidation.validate(given, sendingUploadBody: upload != nil)
            // The host's TLS policy, after the adapters; one the kit cannot enforce refuses the request.
            request = try core.tls.stamped(given)
        } catch {
            return fail(with: error)
        }
        // The cache is asked after the adapters, with the request as it would be sent.
        if let cache = settings.cache, let lookup = cache.lookup(request, cacher: locked({ $0.options.responseCacher })) {
            switch lookup {
            case .answer(let answer): return answerFromCache(answer)
            case .send(let sent, let exchange):
                request = sent
                locked { $0.cacheExchange = exchange }
            }
        }
        let number = locked { $0.phase.attemptQueued() }
        // With waitsForConnectivity, a host with no route holds the attempt here (TransferTask+Connectivity.swift).
        if awaitsRoute(for: request, number: number) { return }
        queueAttempt(request, number: number)
    }

    func queueAttempt(_ request: URLRequest, number: Int) {
        // Made and resumed on the call queue: both wait for URLSession's work queue.
        core.table.noteStarting()
        core.callQueue.async { [self] in makeAndLaunch(request, number: number) }
    }

    private func makeAndLaunch(_ request: URLRequest, number: Int) {
        // Noted as starting in `createAttempt`; from `launch` on the table's admission accounts for it.
        var launched = false
        defer { if !launched { core.table.dropStarting() } }
        // The encoded body is read in the same lock, before taking the core's: the lock order is
        // always transfer, then core.
        let (launchDecision, encoded) = locked { ($0.phase.launchDecision(number: number), $0.encodedBody) }
        switch launchDecision {
        case .start: break
        case .cancelled: return fail(with: .cancelled(url: request.url))
        case .dropped: return
        }
        let handedOver = core.tls.handedOver(request)
        guard let task = core.makeTask({ makeURLSessionTask(for: handedOver, encoded: encoded, in: $0) }) else {
            return fail(with: .sessionInvalidated(url: request.url))
        }
        let decision = locked { state -> TaskPhaseMachine<URLSessionTask>.LaunchDecision in
            let decision = state.phase.attemptMade(task, number: number)
            if decision == .start {
                state.currentRequest = request
                state.restartWaitClock(awaitingHead: true)
                state.noteAttempt(request)
            }
            return decision
        }
        switch decision {
        case .start:
            launched = true
            launch(task, origin: RedirectPolicy.origin(of: request.url) ?? "")
        // Cancelled, paused or replaced while the URLSession task was being made. It never ran;
        // cancelled, it leaves URLSession's registry.
        case .cancelled:
            task.cancel()
            fail(with: .cancelled(url: request.url))
        case .dropped: task.cancel()
        }
    }

    /// Completes the task with a stored answer (or the 504 of `only-if-cached`), once, through
    /// the same finisher as a network answer: validation, serializers and the completion queue.
    private func answerFromCache(_ answer: CacheAnswer) {
        let completion = locked { state -> Completion? in
            // A cancel that came first wins.
            if state.phase.state == .cancelling {
                return state.finishRequested(.cancelled(url: originalRequest.url), handle: nil, keepingBytes: false)
            }
            guard state.phase.finishRequested() else { return nil }
            state.response = answer.response
            // The final progress counts the stored body (an upload sent nothing).
            state.received = Int64(answer.data.count)
            state.expectedToReceive = Int64(answer.data.count)
            var completion = state.complete(error: nil)
            completion.outcome.data = answer.data
            completion.outcome.metrics.cacheOutcome = answer.outcome
            completion.outcome.cache = nil
            return completion
        }
        if let completion { perform(completion) }
    }

    // MARK: - Completion

    /// Everything needed to finish, gathered under the lock and performed after it.
    struct Completion: Sendable {
        var outcome: TransferOutcome
        let handle: (any SessionTask)?
        let observers: [ProgressObserver]
        var finalProgress: [ProgressDirection: Progress]
        /// `cancel(producingResumeData:)`'s handler; it gets the resume data the error carries.
        let resumeDataHandler: (@Sendable (ResumeData?) -> Void)?
        /// A download's ending, for its writer to carry out once every accepted byte is written,
        /// with the files to remove if the partial file is not kept.
        let ending: (DiskWriter.Ending, removing: [URL])?
        /// A multipart body Courier encoded into a temporary file, removed before anything else
        /// (its handle, which keeps the sweep of abandoned side files away, goes after).
        var encodedBodyFile: (URL, SideFile.Handle)? = nil
    }

    /// Finishes the task; a download first waits for its writer to write every accepted byte and
    /// end the file (the completion then runs on the writer's queue).
    func perform(_ completion: consuming Completion) {
        timers.end()
        if let (url, _) = completion.encodedBodyFile {
            unlink(url.path)
            completion.encodedBodyFile = nil
        }
        let finished = consume completion
        guard let (ending, removing) = finished.ending, let writer else { return deliver(finished) }
        writer.finish(ending, removing: removing) { [self] settled in
            deliver(finished.settled(by: settled, url: originalRequest.url))
        }
    }

    private func deliver(_ completion: Completion) {
        if let handler = completion.resumeDataHandler {
            let resumeData = completion.outcome.error?.resumeData
            settings.delivery.withoutGroup.run { handler(resumeData) }
        }
        if !completion.observers.isEmpty {
            let observers = completion.observers
            let finalProgress = completion.finalProgress
            settings.delivery.withoutGroup.run {
                for observer in observers {
                    if let progress = finalProgress[observer.direction] { observer.handler(progress) }
                    observer.finish?()
                }
            }
        }
        finisher(completion.outcome, completion.handle)
        core.live.remove(self, resumeData: completion.outcome.error?.resumeData)
    }
}

extension TransferTask.Completion {
    /// The completion once the writer has ended the file: a write error or a checksum mismatch
    /// replaces success or another failure (never a cancellation), and kept bytes become the
    /// error's resume data.
    func settled(by settled: DiskWriter.Settled, url: URL?) -> Self {
        var completion = self
        completion.outcome.stagedFile = settled.stagedFile
        completion.outcome.stagedHandle = settled.stagedHandle
        if let failure = settled.failure {
            if completion.outcome.error?.code != .cancelled {
                completion.outcome.error = failure.adding(url: url, response: outcome.response, body: nil)
            }
            completion.finalProgress = [:]
        } else if let resumeData = settled.resumeData, var error = completion.outcome.error {
            error.resumeData = resumeData
            completion.outcome.error = error
        }
        return completion
    }
}

/// What a transfer produced, handed to the finisher for validation and serialization.
struct TransferOutcome: Sendable {
    let request: URLRequest
    var response: HTTPURLResponse?
    var data: Data
    /// A download's complete staging file, not yet published.
    var stagedFile: URL?
    /// Its open descriptor, released once it is published or removed (it holds the file's lock).
    var stagedHandle: SideFile.Handle? = nil
    var error: CourierError?
    /// A resumed download found everything already on disk (the server answered 416).
    let alreadyComplete: Bool
    let report: DownloadReport
    /// Files to remove once the download is published (its resume record).
    let obsoleteFiles: [URL]
    /// Where an `.atResponse` destination said the file goes (its closure is not asked again).
    var resolvedDestination: (url: URL, options: DownloadDestination.Options)?
    /// The task's timeline, ended.
    var metrics: TaskMetrics
    /// What the response cache decided before the last attempt (`nil` without a cache).
    var cache: CacheExchange? = nil
}
