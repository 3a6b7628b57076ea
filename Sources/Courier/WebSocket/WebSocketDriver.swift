import Foundation
internal import CourierSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine behind a ``WebSocketTask``: opens the byte stream, writes the handshake and the
/// frames, reads with `DispatchSource`s (no timer that wakes up to look: an idle connection costs
/// no CPU), answers pings and the closing handshake, and completes the task once.
///
/// One lock around one ``WebSocketConnectionState``: every event decides under it and returns
/// ``WebSocketEffects``, which the driver performs after unlocking — continuations are resumed
/// and user handlers called outside the lock. The socket's sources and timers belong to
/// ``queue`` (``WebSocketIO``); the socket is read and written there, except that a `send` may
/// write its frame on its own thread under the claim the state gives (``writeDirectly(_:to:)``).
final class WebSocketDriver: Sendable {
    typealias Message = URLSessionWebSocketTask.Message

    let url: URL
    /// The request as given, and as sent (the manager's default headers merged in).
    let originalRequest: URLRequest
    let sentRequest: URLRequest
    let taskIdentifier: Int
    let protocols: [String]
    /// The serial queue every socket call, source and timer runs on.
    let queue: DispatchQueue
    let state: Locked<WebSocketConnectionState>
    /// What only ``queue`` touches.
    let io: WebSocketIO
    private let core: SessionCore
    let events: EventDispatcher
    private let delivery: Delivery
    let configuration: SessionManager.Configuration
    let created = ContinuousClock.now

    init(
        request: URLRequest, sentRequest: URLRequest, protocols: [String], taskIdentifier: Int, core: SessionCore,
        events: EventDispatcher, delivery: Delivery, configuration: SessionManager.Configuration
    ) {
        let url = request.url ?? URL(string: "ws://invalid")!
        self.url = url
        self.originalRequest = request
        self.sentRequest = sentRequest
        self.protocols = protocols
        self.taskIdentifier = taskIdentifier
        self.core = core
        self.events = events
        self.delivery = delivery
        self.configuration = configuration
        self.queue = DispatchQueue(label: "\(configuration.label).websocket-\(taskIdentifier)", target: .global())
        self.state = Locked(WebSocketConnectionState(url: url, options: configuration.webSocket))
        self.io = WebSocketIO()
    }

    /// Attaches the public handle (weakly, until `resume()` keeps it alive).
    func attach(_ handle: WebSocketTask) {
        state.withLock { $0.task.handle = handle }
    }

    var handle: WebSocketTask? { state.withLock { $0.task.retained ?? $0.task.handle } }
    var metrics: TaskMetrics { state.withLock { $0.task.metrics } }

    /// A masking key from the system's random source, fresh for each frame (§5.3).
    static func freshMaskingKey() -> WebSocketMaskingKey {
        var generator = SystemRandomNumberGenerator()
        let value: UInt32 = generator.next()
        return WebSocketMaskingKey(
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }

    // MARK: Starting

    /// `resume()`: builds the handshake, then connects. Does nothing after the first time.
    func resume() {
        let headers = (sentRequest.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
            .map { (name: $0.key, value: $0.value) }
        var nonce = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = generator.next() }
        let handshake: WebSocketHandshake
        do {
            // Offered only where zlib loads: an agreement must be one Courier can keep.
            let compression = state.withLock { $0.options.compression }.flatMap { WebSocketDeflateStream.isAvailable ? $0 : nil }
            handshake = try WebSocketHandshake(
                url: url, nonce: nonce, protocols: protocols, headers: headers, compression: compression)
        } catch {
            let effects = state.withLock { state -> WebSocketEffects in
                guard state.phase == .initialized else { return WebSocketEffects() }
                _ = state.resume(handshake: placeholderHandshake)
                return state.cancel(code: nil, reason: "", failure: error)
            }
            started()
            perform(effects)
            return
        }
        guard !core.isInvalidated else {
            let effects = state.withLock { state -> WebSocketEffects in
                guard state.resume(handshake: handshake) else { return WebSocketEffects() }
                return state.cancel(code: nil, reason: "", failure: .sessionInvalidated(url: url))
            }
            started()
            perform(effects)
            return
        }
        let (resumed, timeout) = state.withLock { state in
            (state.resume(handshake: handshake), state.options.openTimeout)
        }
        guard resumed else { return }
        started()
        let openTimeout = timeout ?? .seconds(max(0.001, sentRequest.timeoutInterval))
        // With waitsForConnectivity, a host with no route holds the open here (WebSocketDriver+Connectivity.swift).
        openWhenRouted(timeout: openTimeout)
    }

    /// Connects within `openTimeout` (the timer starts now), then sends the handshake.
    func connect(timeout openTimeout: Duration) {
        // Weak: a finished task must not stay in memory until its timer's deadline.
        queue.asyncAfter(deadline: .now() + openTimeout.dispatchInterval) { [weak self] in
            guard let self else { return }
            perform(state.withLock { $0.openTimerFired(after: openTimeout) })
        }
        let configuration = configuration
        let target = url
        Task.detached { [self] in
            do throws(CourierError) {
                let stream = try await openByteStream(
                    for: target, configuration: configuration, tls: core.tls.enforcer, timeout: openTimeout)
                queue.async { self.connected(stream) }
            } catch {
                var error = error
                if error.url == nil { error.url = target }
                connectFailed(error, timeout: openTimeout)
            }
        }
    }

    /// A handshake for a URL that could not make one, so the state can fail the same way.
    private var placeholderHandshake: WebSocketHandshake {
        // A fixed, valid URL and nonce: this handshake is never sent.
        try! WebSocketHandshake(url: URL(string: "ws://localhost/")!, nonce: [UInt8](repeating: 0, count: 16))
    }

    /// Registers the running task: live, kept alive, reported as resumed.
    private func started() {
        let handle = state.withLock { state -> WebSocketTask? in
            state.task.retained = state.task.handle
            state.task.metrics.resumedAt = ContinuousClock.now - created
            return state.task.handle
        }
        core.live.add(self)
        events.emit(.resumed, for: handle)
    }

    /// On ``queue``: the socket is connected.
    private func connected(_ stream: any WebSocketByteStream) {
        let connected = state.withLock { state -> Bool in
            guard state.connected() else { return false }
            state.stream = stream  // For a `send` that writes on its own thread (sendNow).
            return true
        }
        guard connected else {
            stream.close()
            return
        }
        io.start(stream: stream, queue: queue, driver: self)
        flushWrites()
    }

    // MARK: Effects

    /// Acts on what an event decided, outside the lock.
    func perform(_ effects: WebSocketEffects) {
        for (receiver, result) in effects.receivers { receiver.resume(returning: result) }
        for (sender, result) in effects.senders { sender.resume(returning: result) }
        if !effects.pongs.isEmpty {
            let pongs = effects.pongs.map { PongCall(handler: $0.0, error: $0.1.map { $0 as? CourierError }) }
            delivery.run {
                for pong in pongs { pong.handler(pong.error ?? nil) }
            }
        }
        let handle = self.handle
        for event in effects.events { events.emit(event, for: handle) }
        if effects.flush { queue.async { self.flushWrites() } }
        if effects.resumeReading { queue.async { self.io.resumeReading(driver: self) } }
        if effects.opened {
            let interval = state.withLock { $0.options.pingInterval }
            if let interval { queue.async { self.io.startKeepalive(every: interval, queue: self.queue, driver: self) } }
        }
        if effects.armCloseTimer {
            let timeout = state.withLock { $0.options.closeTimeout }
            queue.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak self] in
                guard let self else { return }
                perform(state.withLock { $0.closeTimerFired() })
            }
        }
        if effects.armFailureTimer {
            let timeout = state.withLock { $0.options.closeTimeout }
            queue.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak self] in
                guard let self else { return }
                perform(state.withLock { $0.failureTimerFired() })
            }
        }
        if effects.teardown { queue.async { self.io.teardown() } }
        if let completion = effects.completion { complete(with: completion) }
    }

    /// A pong handler and what it is called with.
    private struct PongCall: Sendable {
        let handler: WebSocketConnectionState.PongHandler
        let error: CourierError??
    }

    /// Once: the timeline closes, the task leaves the live set, monitors hear of it.
    private func complete(with error: CourierError?) {
        let (handle, metrics) = state.withLock { state -> (WebSocketTask?, TaskMetrics?) in
            guard !state.task.completed else { return (nil, nil) }
            state.task.completed = true
            state.task.metrics.completedAt = ContinuousClock.now - created
            defer { state.task.retained = nil }
            return (state.task.retained ?? state.task.handle, state.task.metrics)
        }
        guard let metrics else { return }
        core.live.remove(self, resumeData: nil)
        let response = state.withLock { $0.response }
        events.emit(
            .completed(
                TaskCompletionEvent(response: response, data: nil, value: nil, fileURL: nil, error: error, metrics: metrics)),
            for: handle)
    }

    // MARK: Socket events (on `queue`)

    /// Writes what waits until the socket would block; then waits for it to be writable.
    func flushWrites() {
        guard let stream = io.stream else { return }
        while true {
            guard let (chunk, offset) = state.withLock({ $0.nextOutgoing }) else {
                io.setWriteArmed(false)
                return
            }
            let written = chunk.withUnsafeBytes { buffer -> Result<Int, CourierError> in
                do throws(CourierError) {
                    return .success(try stream.write(UnsafeRawBufferPointer(rebasing: buffer[offset...])))
                } catch {
                    return .failure(error)
                }
            }
            switch written {
            case .failure(let error):
                perform(state.withLock { $0.connectionEnded(error) })
                return
            case .success(0):
                io.setWriteArmed(true)
                return
            case .success(let count):
                perform(state.withLock { $0.wrote(count) })
            }
        }
    }

    /// On ``queue``, for the read source: reads until the socket would block, reading stops
    /// (``WebSocketConnectionState/readMode``), or 16 reads were made (then again later, so that
    /// a flood cannot keep the queue from writing).
    func readAvailable() {
        guard let stream = io.stream else { return }
        switch readPass(from: stream, into: io.buffer, reads: 16) {
        case .wouldBlock:
            break
        case .paused, .ended:
            io.setReadPaused(true)
        case .more:
            // A TLS stream may hold decrypted bytes its descriptor does not show: look again soon.
            queue.async { self.readAvailable() }
        }
    }

    /// How a ``readPass(from:into:reads:)`` stopped.
    enum ReadPassEnd {
        /// The socket has nothing more now.
        case wouldBlock
        /// Reading stops until the consumer catches up or `resume()` (``WebSocketConnectionState/ReadMode/none``).
        case paused
        /// The stream ended or failed (the state was told).
        case ended
        /// `reads` were made and the stream may hold more.
        case more
    }

    /// Reads `stream` into `buffer` (whose owner is the only caller: the queue's read source, or
    /// the connection's ``WebSocketReadThread``) at most `reads` times, handing each chunk to the
    /// state and acting on what it decides. While the consumer is behind, reads are one control
    /// frame long: a ping or Close frame is answered, and the first data read stops reading.
    func readPass(from stream: any WebSocketByteStream, into buffer: UnsafeMutableRawBufferPointer, reads: Int) -> ReadPassEnd {
        for _ in 0..<reads {
            let target: UnsafeMutableRawBufferPointer
            switch state.withLock({ $0.readMode }) {
            case .none:
                return .paused
            case .controlFrames:
                target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<WebSocketConnectionState.controlFrameReadSize])
            case .all:
                target = buffer
            }
            let outcome: ByteStreamRead
            do throws(CourierError) {
                outcome = try stream.read(into: target)
            } catch {
                perform(state.withLock { $0.connectionEnded(error) })
                return .ended
            }
            switch outcome {
            case .wouldBlock:
                return .wouldBlock
            case .closed:
                perform(state.withLock { $0.connectionEnded(nil) })
                return .ended
            case .bytes(let count):
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                perform(state.withLock { $0.received(bytes) })
                // One `recv` a message on ws, and one a record on wss, fewer than reading on to EAGAIN.
                if count < target.count, stream.shortReadDrains { return .wouldBlock }
            }
        }
        return .more
    }

    // MARK: Consumer calls

    func send(_ message: Message) async throws(CourierError) {
        var frame: WebSocketFrame
        switch message {
        case .string(let text): frame = WebSocketFrame(opcode: .text, payload: Data(text.utf8))
        case .data(let data): frame = WebSocketFrame(opcode: .binary, payload: data)
        @unknown default: throw CourierError(code: .invalidRequest, message: "an unknown kind of WebSocket message", url: url)
        }
        // Compressed outside the lock: each message on its own (no context takeover), so the
        // order sends take the lock in cannot matter.
        let compressor = state.withLock { $0.compressor }
        if let compressor {
            frame.payload = compressor.compress(frame.payload)
            frame.reservedBits = WebSocketMessageAssembler.compressedBit
        }
        let bytes = try frame.encoded(maskingKey: Self.freshMaskingKey(), compressed: compressor != nil)
        let (decision, stream) = state.withLock { ($0.sendNow(bytes), $0.stream) }
        switch decision {
        case .refused(let error):
            throw error
        case .queued(let effects):
            perform(effects)
        case .write(let bytes):
            writeDirectly(bytes, to: stream)
        case .wait:
            // Over the send buffer's limit, or before the 101: wait (the queue writes).
            let result = await withCheckedContinuation { (sender: WebSocketConnectionState.Sender) in
                perform(state.withLock { $0.send(bytes, sender: sender) })
            }
            try result.get()
        }
    }

    /// Writes a frame on the caller's thread under the claim ``WebSocketConnectionState/sendNow(_:)``
    /// gave: no hand-off to ``queue`` when the socket takes the bytes at once (an echo's reply).
    ///
    /// Safe beside the queue: while the claim is held the queue writes nothing
    /// (``WebSocketConnectionState/nextOutgoing`` is `nil`) and the socket's teardown waits for
    /// the claim (``WebSocketConnectionState/teardownAfterDirectWrite``), so the descriptor stays
    /// open; a read on the queue may run meanwhile — a TCP socket takes a `send` and a `recv` at
    /// once, and ``CurlByteStream`` serializes its calls under its own lock (a write that would
    /// wait for it takes nothing and leaves the frame to the queue). The lock of the state
    /// is not held across the system call. Unlike `queue.sync` (measured and dropped, Docs/
    /// Performance.md, "wss:// connect cost and echo latency") the sender never waits for a read
    /// handler: the claim is taken or the queue writes.
    private func writeDirectly(_ bytes: Data, to stream: (any WebSocketByteStream)?) {
        let result: Result<Int, CourierError>
        if let stream {
            result = bytes.withUnsafeBytes { buffer -> Result<Int, CourierError> in
                do throws(CourierError) {
                    return .success(try stream.writeWithoutWaiting(buffer))
                } catch {
                    return .failure(error)
                }
            }
        } else {
            result = .success(0)  // Not reached (the claim needs the stream); the queue writes.
        }
        perform(state.withLock { $0.directWriteEnded(result) })
    }

    /// The next message, or `nil` once the WebSocket closed cleanly.
    ///
    /// Cancelling the calling Swift task ends the wait with
    /// ``WebSocketConnectionState/receiveCancelled`` and leaves the connection open; no message is
    /// taken by a cancelled call.
    func receiveOrEnd() async throws(CourierError) -> Message? {
        // A message already here (or the end) is taken without a continuation. A cancelled
        // Swift task goes the long way, which answers it with `receiveCancelled`.
        if !Task.isCancelled, let (result, effects) = state.withLock({ $0.receiveHeld() }) {
            perform(effects)
            return try result.get()
        }
        let ticket = state.withLock { $0.makeReceiveTicket() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (receiver: WebSocketConnectionState.Receiver) in
                perform(state.withLock { $0.receive(receiver, ticket: ticket) })
            }
        } onCancel: {
            perform(state.withLock { $0.cancelReceive(ticket) })
        }
        return try result.get()
    }

    /// Waits until the connection is open (the 101 arrived), or returns the error that ended it
    /// first. Cancelling the calling Swift task cancels the WebSocket task.
    func opened() async -> Result<Void, CourierError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (sender: WebSocketConnectionState.Sender) in
                perform(state.withLock { $0.awaitOpen(sender) })
            }
        } onCancel: {
            cancel(code: .goingAway, reason: nil, failure: .cancelled(url: url))
        }
    }

    func receive() async throws(CourierError) -> Message {
        if let message = try await receiveOrEnd() { return message }
        throw state.withLock { $0.ending?.error }
            ?? CourierError(code: .connectionLost, message: "the WebSocket is closed", url: url)
    }

    func ping(_ handler: @escaping WebSocketConnectionState.PongHandler) {
        perform(state.withLock { $0.ping(handler) })
    }

    func cancel(code: WebSocketCloseCode?, reason: Data?, failure: CourierError?, receivingUntilServerCloses: Bool = false) {
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        perform(
            state.withLock {
                $0.cancel(code: code, reason: text, failure: failure, receivingUntilServerCloses: receivingUntilServerCloses)
            })
    }

    func setSuspended(_ suspended: Bool) {
        let (changed, resumeReading) = state.withLock { state -> (Bool, Bool) in
            guard state.phase != .closed, state.phase != .initialized, state.userSuspended != suspended else { return (false, false) }
            state.userSuspended = suspended
            return (true, !state.readingPaused)
        }
        guard changed else { return }
        if resumeReading { queue.async { self.io.resumeReading(driver: self) } }
        events.emit(suspended ? .suspended : .resumed, for: handle)
    }

    /// A keep-alive tick, on ``queue``.
    func keepaliveTick() {
        perform(state.withLock { $0.keepaliveTick() })
    }
}

extension Duration {
    /// The duration as a dispatch interval (nanoseconds, saturating).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}

extension WebSocketDriver: LiveTask {
    func cancelForAll(producingResumeData: Bool) {
        cancel(code: .goingAway, reason: nil, failure: .cancelled(url: url))
    }

    func sessionWasInvalidated(cancelingTasks: Bool) {
        guard cancelingTasks else { return }
        cancel(code: .goingAway, reason: nil, failure: .sessionInvalidated(url: url))
    }

    var liveHandle: (any SessionTask)? { handle }
}
