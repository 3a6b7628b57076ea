import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every mutable field of one transfer, and the decisions made on them: the pure half of
/// `TransferTask`.
///
/// `TransferTask` (the driver) keeps one `TransferState` behind one lock. Each callback runs a
/// `mutating` decision of this value under the lock and gets back what must be done (an action, a
/// follow-up, a completion); the driver does it after unlocking. The decisions reach nothing
/// outside the value: what they read and never change is in ``context``, what is only known at
/// the call (whether the manager was invalidated) is passed in, and the events they decide are
/// queued in ``outbox``, which the driver hands to the monitors before it lets go of the lock, so
/// they keep the order the lock gives them (EventDispatcher.swift). The kind's own state is its
/// body's: ``FileBody`` for a download, ``StreamBody`` for a stream, ``MemoryBody`` otherwise.
struct TransferState {
    /// What the decisions read and never change, fixed when the task is made.
    struct Context {
        /// The request as the caller made it (with the headers Courier adds for its kind).
        let originalRequest: URLRequest
        /// An upload's body (`nil` for other kinds).
        let upload: UploadBody?
        /// Which responses count as success.
        let validation: Validation
        let maximumResponseSize: Int
        let progressInterval: Duration
        let temporaryDirectory: URL
        /// Someone listens to the task's events: build them only then.
        let emitsEvents: Bool
        /// The manager's TLS policies: a redirect stamps the new host's, an error names it (Sources/Courier/TLS).
        var tls = SessionTLS(TLSEnforcer(TLSPolicies()))
        /// A request to a host with no route waits for one (``SessionManager/Configuration/waitsForConnectivity``).
        var waitsForConnectivity = false
    }

    let context: Context
    typealias Completion = TransferTask.Completion
    typealias FollowUp = TransferTask.FollowUp
    /// Events decided under the lock, in order, each with the handle it is for; the driver queues
    /// them for the monitors before unlocking (`TransferTask.locked(_:)`).
    var outbox: [(TaskEvent, (any SessionTask)?)] = []
    /// Where the task is, with the current attempt's URLSession task (TaskPhaseMachine.swift).
    var phase = TaskPhaseMachine<URLSessionTask>()
    /// The public handle; strong only while the task runs, so a started task survives its
    /// caller dropping the handle, and an unstarted one is freed with it.
    weak var handle: (any SessionTask)?
    var retainedHandle: (any SessionTask)?
    var taskIdentifier = -1
    var currentRequest: URLRequest?
    var response: HTTPURLResponse?
    /// The body held in memory (MemoryBody.swift); a download's goes to its file, an accepted stream's to its consumer.
    var memory = MemoryBody(limit: 0)
    var received: Int64 = 0
    var expectedToReceive: Int64?
    var sent: Int64 = 0
    var expectedToSend: Int64?
    /// Set when the current attempt asked for the body from this offset on.
    var rangeOffset: Int64?
    /// Where the current attempt's 206 ends (exclusive): its `Content-Range` says no more.
    var spanEnd: Int64?
    /// The body held was continued with `Range` at least once.
    var continuedByRange = false
    /// A strong validator of the body held, which makes continuing with `Range` safe.
    var validator: String? {
        get {
            switch validatorSource {
            case .known(let validator): validator
            case .response(let http): BodyFacts.strongValidator(of: http)
            }
        }
        set { validatorSource = .known(newValue) }
    }
    /// Where ``validator`` comes from: a value, or the response of the body held, read only when
    /// asked — on Linux each header lookup costs ~2k instructions, and a data task that never
    /// continues never needs its `ETag` or `Last-Modified`.
    var validatorSource = ValidatorSource.known(nil)

    /// See ``validatorSource``.
    enum ValidatorSource {
        /// Known (or known to be absent).
        case known(String?)
        /// `BodyFacts.strongValidator(of:)` of this response, when asked.
        case response(HTTPURLResponse)
    }
    var ignoresBody = false
    var failure: CourierError?
    /// The current attempt's answer could not be used as HTTP (an impossible `Content-Length`,
    /// ``ContentLength/impossible(_:)``): the attempt ends as if its connection broke, and the
    /// retry model retries or continues it. Unlike ``failure``, which is final. Cleared when an
    /// attempt begins.
    var brokenAnswer: CourierError?
    var observers: [ProgressObserver] = []
    var lastProgressDelivery: [ProgressDirection: ContinuousClock.Instant] = [:]
    /// A download's body: its plan, the file operations decided for the driver's writer, and its
    /// bookkeeping (FileBody.swift); `nil` for other kinds.
    var file: FileBody?
    /// Answers to `Range` in a row that did not continue the bytes held, so the body started over.
    var restarts = 0
    var options: TaskOptions
    /// 0 for the first attempt; counts retries (redirect and authentication follow-ups are
    /// part of the same attempt).
    var attempt = 0
    /// This attempt's redirects (RedirectState.swift).
    var redirects = RedirectState()
    /// A 307/308 with a body, to be re-sent by Courier (URLSession drops the body).
    var pendingRedirect: URLRequest?
    /// This attempt's answer to a 401 (ChallengeState.swift).
    var challenge = ChallengeState()
    /// When the stream's waits must be checked next (the wait timer is the driver's, moved as it
    /// leaves the lock, ``TaskTimers``); `nil`: leave it as it is.
    var nextWaitCheck: Duration?
    /// A multipart body once encoded (in memory or in a private temporary file).
    var encodedBody: TransferTask.EncodedBody?
    /// A streamed body's own state (StreamBody.swift); `nil` for other kinds.
    var stream: StreamBody?
    /// The task's timeline (Sources/Courier/Events/TaskMetrics.swift).
    var metrics = MetricsRecorder()
    /// What the response cache decided before the current attempt (Sources/Courier/Cache).
    var cacheExchange: CacheExchange?

    /// The time of the event being decided. The driver sets it before every decision
    /// (`TransferTask.locked`): a decision never reads a clock, and a test says what time it is.
    var now: ContinuousClock.Instant

    init(context: Context, options: TaskOptions, now time: ContinuousClock.Instant) {
        self.context = context
        self.options = options
        now = time
        self.memory = MemoryBody(limit: context.maximumResponseSize)
    }

    /// Queues `event` for the task's monitors; builds nothing when nobody listens.
    mutating func emit(_ event: @autoclosure () -> TaskEvent) {
        guard context.emitsEvents else { return }
        outbox.append((event(), retainedHandle ?? handle))
    }

    /// Sets up `request` to ask for the body from `offset` on, only if unchanged since `validator`.
    mutating func rangeRequest(_ request: URLRequest, from offset: Int64, validator: String?) -> URLRequest {
        var request = request
        request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        if let validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
        // Offsets count decoded bytes; a compressed answer would make them meaningless (Docs/Platform.md §2.7).
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        rangeOffset = offset
        return request
    }
}

extension TransferState {

    /// The request for the next attempt: the rest of the body with `Range` when that is safe,
    /// otherwise the whole request again with the body held so far dropped.
    mutating func restartRequest() -> URLRequest {
        sent = 0
        guard canContinueByRange() else {
            _ = startOver(.cannotContinue)
            // A split download asks `bytes=0-` again, so that the answer can prove ranges anew.
            return freshRequest()
        }
        return rangeRequest(context.originalRequest, from: received, validator: validator)
    }

    /// Whether the bytes held can be continued with `Range`: a plain GET whose body arrived
    /// unencoded, with a strong validator (or a download policy that opts in without one).
    func canContinueByRange() -> Bool {
        guard AutomaticResend.isAllowed(.rangeContinuation, for: context.originalRequest), received > 0, !ignoresBody,
            context.originalRequest.value(forHTTPHeaderField: "Range") == nil
        else { return false }
        // An upload's answer is not the body it sent; a download's policy may opt in without a validator.
        guard context.upload == nil else { return false }
        return validator != nil || file?.plan.policy.resumesWithoutValidator == true
    }

    /// Forgets the body held. Only ``startOver(_:)`` calls it: every site that drops a body goes
    /// through that one decision (a test greps for other callers).
    mutating func resetBody() {
        memory.reset()
        received = 0
        rangeOffset = nil
        spanEnd = nil
        continuedByRange = false
        ignoresBody = false
        // Segment bytes are dropped with the rest.
        file?.segments = nil
        // Queued behind the writes already accepted, which it then drops (with their SHA-256).
        if file?.partialFile != nil { file?.diskRequests.append(.truncate) }
    }

    // MARK: - Completion

    /// Ends the task: gathers the outcome and what becomes of the body. With `keeping`, a failed
    /// download's partial file (and record) stay for resuming, and the error gets this resume data
    /// with the bytes the writer really wrote; otherwise they are removed.
    mutating func complete(error: CourierError?, keeping resume: ResumeData? = nil) -> Completion {
        phase.completed()
        let timeline = metrics.complete(error: error)
        var obsoleteFiles: [URL] = []
        var resumeDataHandler: (@Sendable (ResumeData?) -> Void)?
        var ending: (DiskWriter.Ending, removing: [URL])?
        // The encoded multipart body is removed on every path (by the driver, after unlocking).
        var encodedFile: (URL, SideFile.Handle)?
        if case .file(let url, let handle)? = encodedBody { encodedFile = (url, handle) }
        encodedBody = nil
        if let body = file {
            let plan = body.plan
            let record = plan.recordFile
            // Removed unless the partial file is published or kept: nothing worth continuing stays.
            let removing = [
                body.partialFile, plan.partialFile, plan.resumeFrom?.partialFile, record,
                record.map(AtomicFile.temporaryFile),
            ].compactMap { $0 }
            if error == nil {
                // Also after a 416 that proved the file complete: the writer's digest covers the
                // whole file (bytes an earlier run wrote are hashed when it is opened).
                ending = (.publish(expectedSHA256: plan.policy.expectedSHA256, url: context.originalRequest.url), removing)
                // Removed once the file is published.
                if let record { obsoleteFiles += [record, AtomicFile.temporaryFile(for: record)] }
            } else if let resume {
                ending = (.keep(resume, record: record), removing)
            } else {
                ending = (.discard, removing)
            }
            resumeDataHandler = body.resumeDataHandler
            file?.resumeDataHandler = nil
        }
        let data = memory.take()
        let outcome = TransferOutcome(
            request: currentRequest ?? context.originalRequest, response: response, data: data,
            stagedFile: nil, error: error?.adding(url: context.originalRequest.url, response: response, body: nil),
            alreadyComplete: ignoresBody,
            report: file?.report(continuations: timeline.attempts.count { $0.kind == .continuation }) ?? DownloadReport(),
            obsoleteFiles: obsoleteFiles,
            resolvedDestination: file?.resolvedDestination, metrics: timeline, cache: cacheExchange)
        var finalProgress: [ProgressDirection: Progress] = [:]
        if error == nil {
            for direction in Set(observers.map(\.direction)) {
                finalProgress[direction] = progressSnapshot(direction)
            }
        }
        let completion = Completion(
            outcome: outcome, handle: retainedHandle ?? handle, observers: observers,
            finalProgress: finalProgress, resumeDataHandler: resumeDataHandler, ending: ending,
            encodedBodyFile: encodedFile)
        observers = []
        retainedHandle = nil
        return completion
    }
}
