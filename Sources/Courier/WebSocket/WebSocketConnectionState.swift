import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a ``WebSocketDriver`` knows about its connection, as one value behind its lock:
/// the phase, the bytes waiting to be written, the messages waiting for the consumer and who
/// waits for what. Each event is a `mutating` method that returns ``WebSocketEffects``: what the
/// driver does after unlocking (resume a continuation, call a pong handler, write, tear down).
/// It never touches the socket, a clock or a queue.
struct WebSocketConnectionState {
    typealias Message = URLSessionWebSocketTask.Message
    typealias Receiver = CheckedContinuation<Result<Message?, CourierError>, Never>
    typealias Sender = CheckedContinuation<Result<Void, CourierError>, Never>
    typealias PongHandler = @Sendable ((any Error)?) -> Void

    /// Where the connection is.
    enum Phase: Equatable {
        /// Made, not resumed.
        case initialized
        /// Resolving and connecting.
        case connecting
        /// Connected; the handshake is sent and its answer awaited.
        case handshaking
        /// Messages flow.
        case open
        /// A Close frame was sent or received (or the connection failed): waiting for the rest of
        /// the closing handshake and for the server to close TCP.
        case closing
        /// The socket is closed and the task completed.
        case closed
    }

    /// How the conversation ended, as decided (the socket may still be closing).
    enum Ending {
        /// A closing handshake, either side's: the task completes without an error, `receive()`
        /// throws `receiveError`, the message sequence ends.
        case clean(receiveError: CourierError)
        /// A failure: the task completes with it and `receive()` throws it.
        case failed(CourierError)

        var error: CourierError {
            switch self {
            case .clean(let error), .failed(let error): return error
            }
        }
    }

    /// The task's own record beside the connection: the handle (kept alive from `resume()` to
    /// completion) and its timeline.
    struct TaskRecord {
        weak var handle: WebSocketTask?
        var retained: WebSocketTask?
        var metrics = TaskMetrics(createdAt: Date())
        var completed = false
    }

    let url: URL
    var task = TaskRecord()
    var phase = Phase.initialized
    var options: WebSocketOptions
    var maximumMessageSize = 1 << 20
    var handshake: WebSocketHandshake?
    var headParser: WebSocketResponseHeadParser
    var reader: WebSocketReader?
    var response: HTTPURLResponse?
    var subprotocol: String?
    /// The compressor of `permessage-deflate`, once the server accepted it: a message sent after
    /// that is compressed (one sent before the answer goes out uncompressed, which RFC 7692 allows).
    var compressor: WebSocketDeflateStream?

    /// Bytes to write, in order (the handshake's head first, then frames); `outgoingOffset` of the
    /// first are written.
    var outgoing: [Data] = []
    /// Whether the first of ``outgoing`` is the handshake's head: until its answer arrives,
    /// nothing after it is written (§4.1: the client waits for the response before sending).
    var headQueued = false
    var outgoingOffset = 0
    var outgoingBytes = 0
    var senders: [Sender] = []
    /// A `send` is writing the first of ``outgoing`` on its caller's thread, outside the lock
    /// (``sendNow(_:)``): until it hands the claim back (``directWriteEnded(_:)``) nothing else
    /// writes, so frames keep their order, and the socket is not torn down under the write.
    var directWriteClaimed = false
    /// The end came while a direct write held the claim: the teardown waits for the claim.
    var teardownAfterDirectWrite = false
    /// The connection's byte stream, held for a direct write only: the state never calls it.
    var stream: (any WebSocketByteStream)?

    /// Messages received and not yet taken, from `inboxStart`.
    var inbox: [Message] = []
    var inboxStart = 0
    var inboxBytes = 0
    /// `receive()` calls waiting, each with its ticket (``ReceiveTicket``).
    var receivers: [(ticket: UInt64, receiver: Receiver)] = []
    /// Tickets given to `receive()` calls that have not reached ``receive(_:ticket:)`` yet, and
    /// whether their Swift task was cancelled meanwhile (the cancellation handler can run first).
    var unregisteredReceives: [UInt64: Bool] = [:]
    var nextReceiveTicket: UInt64 = 0
    /// While the consumer is behind (``ReadMode/controlFrames``), a read brought data: reading
    /// stops until the consumer catches up.
    var readDataWhileBehind = false

    var pings: [(payload: Data, handler: PongHandler)] = []
    var pingCounter: UInt64 = 0
    /// Whether anything came from the server since the last keep-alive tick, and whether a
    /// keep-alive ping is unanswered.
    var heardSinceTick = true
    var keepaliveOutstanding = false

    /// `suspend()` stopped reading.
    var userSuspended = false
    var sentClose = false
    var receivedClose = false
    var closeCode: WebSocketCloseCode?
    var closeReason: Data?
    var ending: Ending?
    /// A rule the server broke right after messages the consumer has not taken yet: the failure
    /// waits until it asks for the next message (or ``WebSocketOptions/closeTimeout`` passes), so
    /// that its answers to those messages go out before the Close frame.
    var pendingFailure: WebSocketProtocolError?
    /// A message went to the consumer and it has not asked for another since: it may still be
    /// answering it.
    var consumerHoldsMessage = false
    var bytesSent: Int64 = 0
    var bytesReceived: Int64 = 0

    init(url: URL, options: WebSocketOptions) {
        self.url = url
        self.options = options
        self.headParser = WebSocketResponseHeadParser(url: url)
    }

    /// How the driver reads the socket now.
    enum ReadMode: Equatable {
        /// Whole reads.
        case all
        /// The consumer is behind (``StreamPolicy/Overflow/pause``): reads of at most
        /// ``WebSocketConnectionState/controlFrameReadSize`` bytes, so that a ping or a Close frame
        /// the server sends while no data waits in the socket is still read and answered; the
        /// first read that brings data stops reading (``readDataWhileBehind``).
        case controlFrames
        /// Not at all: `suspend()` asked, or the consumer is behind and data waits (TCP then
        /// slows the server down; what the server sends after that data, pings included, waits).
        case none
    }

    /// The largest control frame a server sends: a 2-byte header and 125 bytes of payload (§5.5).
    static let controlFrameReadSize = 127

    /// Whether the consumer holds ``WebSocketOptions/receiveBufferLimit`` or more message bytes
    /// under ``StreamPolicy/Overflow/pause``.
    var consumerIsBehind: Bool {
        options.overflow == .pause && inboxBytes >= options.receiveBufferLimit && phase == .open
    }

    /// How the driver is to read the socket now.
    var readMode: ReadMode {
        if userSuspended { return .none }
        guard consumerIsBehind else { return .all }
        // A data frame half read, or data read since falling behind: the next bytes may be data.
        if readDataWhileBehind || reader?.isInsideDataFrame == true { return .none }
        return .controlFrames
    }

    /// Whether the driver should stop reading the socket: the consumer is behind (with
    /// ``StreamPolicy/Overflow/pause``) and data waits, or `suspend()` asked. TCP then slows
    /// the server down.
    var readingPaused: Bool { readMode == .none }

    /// Whether the socket is connected, so that writes can go out.
    var isConnected: Bool { phase == .handshaking || phase == .open || phase == .closing }

    // MARK: Opening

    /// `resume()` with the handshake made: its head goes out first, before any frame sent early.
    mutating func resume(handshake: WebSocketHandshake) -> Bool {
        guard phase == .initialized else { return false }
        self.handshake = handshake
        reader = WebSocketReader(maximumFrameSize: maximumMessageSize, maximumMessageSize: maximumMessageSize)
        let head = Data(handshake.head.utf8)
        outgoing.insert(head, at: 0)
        outgoingBytes += head.count
        headQueued = true
        phase = .connecting
        return true
    }

    /// The socket connected: `false` when the task ended meanwhile (the socket is to be closed).
    mutating func connected() -> Bool {
        guard phase == .connecting else { return false }
        phase = .handshaking
        return true
    }

    // MARK: Bytes from the server

    /// Bytes read from the socket.
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> WebSocketEffects {
        var effects = WebSocketEffects()
        heardSinceTick = true
        bytesReceived += Int64(bytes.count)
        switch phase {
        case .handshaking:
            do throws(CourierError) {
                guard let (head, remainder) = try headParser.parse(bytes), let handshake else { return effects }
                response = HTTPURLResponse(
                    url: url, statusCode: head.status, httpVersion: "HTTP/1.1",
                    headerFields: Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" }))
                let negotiated = try handshake.validate(status: head.status, headers: head.headers)
                subprotocol = negotiated.subprotocol
                if let agreement = negotiated.compression {
                    guard let inflater = WebSocketDeflateStream(inflating: true),
                        let deflater = WebSocketDeflateStream(inflating: false, windowBits: agreement.clientMaximumWindowBits)
                    else {
                        throw CourierError(code: .invalidResponse, message: "zlib could not start permessage-deflate", url: url)
                    }
                    reader?.acceptCompression(inflater, resetsAfterEachMessage: agreement.serverNoContextTakeover)
                    compressor = deflater
                }
                phase = .open
                effects.opened = true
                effects.flush = !outgoing.isEmpty  // Frames sent before the answer go out now.
                releaseSenders(into: &effects)
                if let response { effects.events.append(.response(response)) }
                if !remainder.isEmpty {
                    remainder.withUnsafeBytes { readFrames($0, into: &effects) }
                }
            } catch {
                fail(error, into: &effects)
            }
        case .open, .closing:
            readFrames(bytes, into: &effects)
        case .initialized, .connecting, .closed:
            break
        }
        return effects
    }

    private mutating func readFrames(_ bytes: UnsafeRawBufferPointer, into effects: inout WebSocketEffects) {
        let wasBehind = consumerIsBehind
        // Optional chaining mutates the reader in place (a copy would copy its buffers).
        guard let result = reader?.read(bytes) else { return }
        var delivered = false
        defer {
            // Data read while behind (a whole message, or a frame begun): stop reading until the
            // consumer catches up, so memory stays at the limit plus this one short read.
            if wasBehind, delivered || reader?.isInsideDataFrame == true { readDataWhileBehind = true }
        }
        for output in result.outputs {
            switch output {
            case .text(let text):
                deliver(.string(text), size: text.utf8.count, into: &effects)
                delivered = true
            case .binary(let data):
                deliver(.data(data), size: data.count, into: &effects)
                delivered = true
            case .ping(let payload):
                // §5.5.2: answered at once, unless our Close frame is out (nothing may follow it).
                if !sentClose { enqueue(WebSocketFrame(opcode: .pong, payload: payload), into: &effects) }
            case .pong(let payload):
                keepaliveOutstanding = false
                // A pong answers its ping and, as §5.5.3 allows a peer to answer only the latest,
                // every ping sent before it.
                if let index = pings.firstIndex(where: { $0.payload == payload }) {
                    effects.pongs += pings[...index].map { ($0.handler, nil) }
                    pings.removeFirst(index + 1)
                }
            case .close(let answer):
                receivedClose = true
                closeCode = answer.receivedCode ?? .noStatusReceived
                closeReason = answer.receivedReason
                if !sentClose { sendClose(answer.replyCode, reason: "", into: &effects) }
                if ending == nil {
                    if let violation = answer.violation {
                        end(.failed(violation.courierError(url: url)), into: &effects)
                    } else {
                        let code = answer.receivedCode.map { "\($0)" } ?? "no status code"
                        end(
                            .clean(
                                receiveError: CourierError(
                                    code: .connectionLost, message: "the server closed the WebSocket (\(code))", url: url)),
                            into: &effects)
                    }
                }
                beginClosing(into: &effects)
            }
        }
        if let failure = result.failure, ending == nil, pendingFailure == nil {
            if delivered || inboxStart < inbox.count || consumerHoldsMessage {
                // The consumer has messages to answer first (Autobahn's 3.x, 4.x, 5.15: a good
                // message, then a bad frame, and the good one's echo expected).
                pendingFailure = failure
                effects.armFailureTimer = true
            } else {
                apply(failure, into: &effects)
            }
        }
    }

    /// §7.1.7: fails the connection with the rule's code, then waits for the server to close.
    private mutating func apply(_ failure: WebSocketProtocolError, into effects: inout WebSocketEffects) {
        pendingFailure = nil
        guard ending == nil else { return }
        if !sentClose { sendClose(failure.closeCode, reason: failure.message, into: &effects) }
        end(.failed(failure.courierError(url: url)), into: &effects)
        beginClosing(into: &effects)
    }

    /// The consumer did not come back for the next message in time: the pending failure applies.
    mutating func failureTimerFired() -> WebSocketEffects {
        var effects = WebSocketEffects()
        if let pendingFailure { apply(pendingFailure, into: &effects) }
        return effects
    }

    /// A message for the consumer: to a waiting `receive()`, or into the inbox.
    private mutating func deliver(_ message: Message, size: Int, into effects: inout WebSocketEffects) {
        guard ending == nil else { return }  // Nothing is delivered after the end was decided.
        if !receivers.isEmpty {
            effects.receivers.append((receivers.removeFirst().receiver, .success(message)))
            consumerHoldsMessage = true
            return
        }
        inbox.append(message)
        inboxBytes += size
        if options.overflow == .fail, inboxBytes > options.receiveBufferLimit {
            let error = CourierError(
                code: .bufferOverflow,
                message: "the WebSocket's consumer fell more than \(options.receiveBufferLimit) bytes behind", url: url)
            sendClose(.policyViolation, reason: "consumer too slow", into: &effects)
            end(.failed(error), into: &effects)
            beginClosing(into: &effects)
        }
    }

    /// The socket reached its end (`error` `nil`) or failed.
    mutating func connectionEnded(_ error: CourierError?) -> WebSocketEffects {
        var effects = WebSocketEffects()
        switch phase {
        case .initialized, .closed:
            return effects
        case .connecting, .handshaking:
            fail(
                error
                    ?? CourierError(
                        code: .noResponse, message: "the server closed the connection before answering the WebSocket handshake",
                        url: url, response: response), into: &effects)
        case .open:
            closeCode = .abnormalClosure
            end(
                .failed(
                    pendingFailure.map { $0.courierError(url: url) } ?? error
                        ?? CourierError(
                            code: .connectionLost, message: "the server closed the connection without a WebSocket Close frame",
                            url: url)), into: &effects)
            finish(into: &effects)
        case .closing:
            if closeCode == nil { closeCode = .abnormalClosure }
            finish(into: &effects)
        }
        return effects
    }

    // MARK: Consumer

    /// A ticket for a `receive()` about to wait, so that cancelling its Swift task can find it
    /// (``cancelReceive(_:)``), even before it reaches ``receive(_:ticket:)``.
    mutating func makeReceiveTicket() -> UInt64 {
        nextReceiveTicket += 1
        unregisteredReceives[nextReceiveTicket] = false
        return nextReceiveTicket
    }

    /// The Swift task of the `receive()` holding `ticket` was cancelled: that call ends with
    /// ``receiveCancelled`` and the connection stays open (as Darwin's task does: cancelling the
    /// Swift task is not closing the socket). A call that was answered already keeps its answer.
    mutating func cancelReceive(_ ticket: UInt64) -> WebSocketEffects {
        var effects = WebSocketEffects()
        if unregisteredReceives[ticket] != nil {
            unregisteredReceives[ticket] = true
        } else if let index = receivers.firstIndex(where: { $0.ticket == ticket }) {
            effects.receivers.append((receivers.remove(at: index).receiver, .failure(receiveCancelled)))
        }
        return effects
    }

    /// What a `receive()` whose Swift task was cancelled throws.
    var receiveCancelled: CourierError {
        CourierError(
            code: .cancelled, message: "the Swift task waiting for a WebSocket message was cancelled (the WebSocket stays open)",
            url: url)
    }

    /// `receive()`: a message held, the end, or a wait. `ticket` from ``makeReceiveTicket()``.
    mutating func receive(_ receiver: Receiver, ticket: UInt64) -> WebSocketEffects {
        if unregisteredReceives.removeValue(forKey: ticket) == true {
            // Cancelled before it got here: nothing is taken, the next call gets the next message.
            var effects = WebSocketEffects()
            effects.receivers.append((receiver, .failure(receiveCancelled)))
            return effects
        }
        guard let (answer, held) = receiveHeld() else {
            consumerHoldsMessage = false
            receivers.append((ticket, receiver))
            return WebSocketEffects()
        }
        var effects = held
        effects.receivers.append((receiver, answer))
        return effects
    }

    /// `receive()` without waiting: a message held or the end, with what taking it implies; `nil`
    /// when the call has to wait (nothing changed then). The driver asks this first, so that a
    /// message already here reaches the caller without a continuation.
    mutating func receiveHeld() -> (Result<Message?, CourierError>, WebSocketEffects)? {
        var effects = WebSocketEffects()
        // Back for more after taking every message held: the failure that waited applies now.
        let holds = consumerHoldsMessage
        consumerHoldsMessage = false
        if inboxStart == inbox.count, let pendingFailure { apply(pendingFailure, into: &effects) }
        if inboxStart < inbox.count {
            consumerHoldsMessage = true
            let wasPaused = readingPaused
            let message = inbox[inboxStart]
            inboxStart += 1
            inboxBytes -= Self.size(of: message)
            if !consumerIsBehind { readDataWhileBehind = false }
            if inboxStart == inbox.count {
                inbox.removeAll(keepingCapacity: true)
                inboxStart = 0
            } else if inboxStart >= 1024, inboxStart * 2 >= inbox.count {
                inbox.removeFirst(inboxStart)
                inboxStart = 0
            }
            effects.resumeReading = wasPaused && !readingPaused
            return (.success(message), effects)
        } else if let ending {
            switch ending {
            case .clean: return (.success(nil), effects)
            case .failed(let error): return (.failure(error), effects)
            }
        }
        // A wait: nothing changes here (``receive(_:ticket:)`` records the waiter).
        consumerHoldsMessage = holds
        return nil
    }

    static func size(of message: Message) -> Int {
        switch message {
        case .string(let text): return text.utf8.count
        case .data(let data): return data.count
        @unknown default: return 0
        }
    }

    // MARK: Sending

    /// `send(_:)`: `frame` (already encoded) is queued; the sender waits while the buffer is over
    /// its limit.
    mutating func send(_ frame: Data, sender: Sender) -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard ending == nil, !sentClose, phase != .closed else {
            effects.senders.append((sender, .failure(sendRefusal)))
            return effects
        }
        append(frame, into: &effects)
        // Before the 101 the sender waits for it: a handshake that fails fails its sends too
        // (as Darwin's task fails queued sends with the task's error).
        if outgoingBytes > options.sendBufferLimit || !handshakeAnswered {
            senders.append(sender)
        } else {
            effects.senders.append((sender, .success(())))
        }
        return effects
    }

    /// What ``sendNow(_:)`` decided.
    enum SendDecision {
        /// Refused (closing, closed or failed): `send` throws this.
        case refused(CourierError)
        /// Nothing was queued: the sender has to wait (``send(_:sender:)`` decides again).
        case wait
        /// Queued and accepted; the driver performs the effects (a flush on its queue).
        case queued(WebSocketEffects)
        /// Queued and accepted, and the claim to write is the caller's: it writes these bytes on
        /// its own thread, outside the lock, then calls ``directWriteEnded(_:)`` once.
        case write(Data)
    }

    /// `send(_:)` without waiting: `frame` (already encoded) is accepted at once when it keeps
    /// the buffer within ``WebSocketOptions/sendBufferLimit`` and the 101 is in — the same rule
    /// as ``send(_:sender:)``, which a ``SendDecision/wait`` hands the call to. When nothing else
    /// waits to be written and no one writes, the caller gets the claim to write the frame
    /// itself: no hand-off to the driver's queue.
    mutating func sendNow(_ frame: Data) -> SendDecision {
        guard ending == nil, !sentClose, phase != .closed else { return .refused(sendRefusal) }
        guard outgoingBytes + frame.count <= options.sendBufferLimit, handshakeAnswered else { return .wait }
        // Empty `outgoing` means no write is in flight: the queue's write holds a chunk that stays
        // in `outgoing` until ``wrote(_:)``, a direct write holds the claim.
        let direct = outgoing.isEmpty && !directWriteClaimed && phase == .open && stream != nil
        var effects = WebSocketEffects()
        append(frame, into: &effects)
        guard direct else { return .queued(effects) }
        directWriteClaimed = true
        return .write(frame)
    }

    /// The direct write of ``SendDecision/write(_:)`` took `result` bytes (0: the socket would
    /// block) or failed: the claim comes back; what is left goes to the driver's queue.
    mutating func directWriteEnded(_ result: Result<Int, CourierError>) -> WebSocketEffects {
        guard directWriteClaimed else { return WebSocketEffects() }
        directWriteClaimed = false
        var effects: WebSocketEffects
        switch result {
        case .success(let count):
            effects = count > 0 ? wrote(count) : WebSocketEffects()
            // The rest of the frame, or frames queued behind it: the queue writes them.
            effects.flush = !outgoing.isEmpty && isConnected
        case .failure(let error):
            effects = connectionEnded(error)
        }
        if teardownAfterDirectWrite {
            teardownAfterDirectWrite = false
            effects.teardown = true
        }
        return effects
    }

    /// A wait for the handshake's answer: resumed with success once the connection is open, or
    /// with the task's error if it never opens (a sender that sends nothing).
    mutating func awaitOpen(_ sender: Sender) -> WebSocketEffects {
        var effects = WebSocketEffects()
        if handshakeAnswered {
            effects.senders.append((sender, .success(())))
        } else if ending != nil || phase == .closed {
            effects.senders.append((sender, .failure(sendRefusal)))
        } else {
            senders.append(sender)
        }
        return effects
    }

    /// Whether the handshake's 101 arrived (the connection is, or was, open).
    var handshakeAnswered: Bool { phase == .open || phase == .closing }

    private var sendRefusal: CourierError {
        if case .failed(let error)? = ending { return error }
        return CourierError(code: .cancelled, message: "the WebSocket is closing or closed; nothing more can be sent", url: url)
    }

    /// `sendPing(pongReceiveHandler:)`.
    mutating func ping(_ handler: @escaping PongHandler) -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard ending == nil, !sentClose, phase != .closed else {
            effects.pongs.append((handler, sendRefusal))
            return effects
        }
        pingCounter += 1
        let payload = withUnsafeBytes(of: pingCounter.bigEndian) { Data($0) }
        pings.append((payload, handler))
        enqueue(WebSocketFrame(opcode: .ping, payload: payload), into: &effects)
        return effects
    }

    /// The next bytes to write and the offset in them already written.
    var nextOutgoing: (Data, Int)? {
        // While a direct write holds the claim, it alone writes (``sendNow(_:)``).
        guard isConnected, phase != .handshaking || headQueued, !directWriteClaimed else { return nil }
        return outgoing.first.map { ($0, outgoingOffset) }
    }

    /// `count` bytes of ``nextOutgoing`` were written.
    mutating func wrote(_ count: Int) -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard let first = outgoing.first else { return effects }
        outgoingOffset += count
        outgoingBytes -= count
        bytesSent += Int64(count)
        if outgoingOffset >= first.count {
            outgoing.removeFirst()
            outgoingOffset = 0
            headQueued = false
        }
        releaseSenders(into: &effects)
        return effects
    }

    /// Senders waiting for room or for the 101 go on once both are there.
    private mutating func releaseSenders(into effects: inout WebSocketEffects) {
        guard outgoingBytes <= options.sendBufferLimit, handshakeAnswered, !senders.isEmpty else { return }
        effects.senders += senders.map { ($0, .success(())) }
        senders.removeAll()
    }

    private mutating func enqueue(_ frame: WebSocketFrame, into effects: inout WebSocketEffects) {
        // Frames made here are control frames of at most 125 bytes: encoding cannot fail.
        guard let bytes = try? frame.encoded(maskingKey: WebSocketDriver.freshMaskingKey()) else { return }
        append(bytes, into: &effects)
    }

    private mutating func append(_ bytes: Data, into effects: inout WebSocketEffects) {
        outgoing.append(bytes)
        outgoingBytes += bytes.count
        effects.flush = isConnected
    }

    // MARK: Closing

    /// `cancel(with:reason:)` (`failure` `nil`: a clean close) or `cancel()` and invalidation
    /// (`failure` set: the task fails with it).
    /// With `receivingUntilServerCloses`, a client's close leaves the consumer reading until the
    /// server's Close frame (§5.5.1: the server may send data until it answers); the close timer,
    /// or TCP closed first, ends the conversation as for any close that was never answered.
    mutating func cancel(
        code: WebSocketCloseCode?, reason: String, failure: CourierError?, receivingUntilServerCloses: Bool = false
    ) -> WebSocketEffects {
        var effects = WebSocketEffects()
        let cancelled = failure ?? CourierError(code: .cancelled, message: "the WebSocket was closed by the client", url: url)
        switch phase {
        case .initialized, .connecting, .handshaking:
            fail(failure ?? cancelled, into: &effects)
        case .open:
            sendClose(code, reason: reason, into: &effects)
            if !(receivingUntilServerCloses && failure == nil) {
                end(failure.map { .failed($0) } ?? .clean(receiveError: cancelled), into: &effects)
            }
            beginClosing(into: &effects)
        case .closing, .closed:
            break
        }
        return effects
    }

    private mutating func sendClose(_ code: WebSocketCloseCode?, reason: String, into effects: inout WebSocketEffects) {
        sentClose = true
        enqueue(WebSocketFrame.close(code, reason: reason), into: &effects)
    }

    /// Records how the conversation ended and tells the waiting consumers.
    private mutating func end(_ ending: Ending, into effects: inout WebSocketEffects) {
        guard self.ending == nil else { return }
        self.ending = ending
        for (_, receiver) in receivers {
            switch ending {
            case .clean: effects.receivers.append((receiver, .success(nil)))
            case .failed(let error): effects.receivers.append((receiver, .failure(error)))
            }
        }
        receivers.removeAll()
    }

    private mutating func beginClosing(into effects: inout WebSocketEffects) {
        guard phase == .open else { return }
        let wasPaused = readingPaused
        phase = .closing
        effects.armCloseTimer = true
        // Reading stopped for a consumer behind: the buffer limit no longer applies (the wait is
        // bounded by the close timer), and the server's Close frame must be read, not waited out.
        if wasPaused && !readingPaused { effects.resumeReading = true }
    }

    /// The close timer fired: the server did not finish the closing handshake in time.
    mutating func closeTimerFired() -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard phase == .closing else { return effects }
        if !receivedClose {
            closeCode = closeCode ?? .abnormalClosure
            let unanswered = CourierError(
                code: .timedOut, message: "the server did not answer the WebSocket Close frame within \(options.closeTimeout)", url: url)
            if ending == nil {
                // A close that keeps receiving: the consumer still waits, and learns why now.
                end(.failed(unanswered), into: &effects)
            } else if case .clean? = ending {
                ending = .failed(unanswered)
            }
        }
        finish(into: &effects)
        return effects
    }

    /// The open timer fired.
    mutating func openTimerFired(after timeout: Duration) -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard phase == .connecting || phase == .handshaking else { return effects }
        fail(
            CourierError(code: .timedOut, message: "the WebSocket handshake did not finish within \(timeout)", url: url),
            into: &effects)
        return effects
    }

    /// A keep-alive tick (``WebSocketOptions/pingInterval``).
    mutating func keepaliveTick() -> WebSocketEffects {
        var effects = WebSocketEffects()
        guard phase == .open else { return effects }
        // Not reading (the consumer is behind): what the server sent waits in the socket unseen.
        if readingPaused { heardSinceTick = true }
        if keepaliveOutstanding, !heardSinceTick {
            closeCode = .abnormalClosure
            let interval = options.pingInterval.map { "\($0)" } ?? "the ping interval"
            end(
                .failed(
                    CourierError(
                        code: .timedOut, message: "the WebSocket server answered nothing for \(interval) after a ping", url: url)),
                into: &effects)
            // A dead peer gets no Close frame: nothing would read it.
            finish(into: &effects)
            return effects
        }
        heardSinceTick = false
        keepaliveOutstanding = true
        enqueue(WebSocketFrame(opcode: .ping), into: &effects)
        return effects
    }

    /// Fails before or during the handshake (no Close frame: there is no WebSocket yet), or for
    /// good: the socket is closed at once.
    private mutating func fail(_ error: CourierError, into effects: inout WebSocketEffects) {
        if error.response == nil, let response, error.code != .cancelled, error.code != .timedOut {
            var error = error
            error.response = response
            end(.failed(error), into: &effects)
        } else {
            end(.failed(error), into: &effects)
        }
        finish(into: &effects)
    }

    /// The end: the socket goes, every waiter is answered, the task completes (once).
    private mutating func finish(into effects: inout WebSocketEffects) {
        guard phase != .closed else { return }
        phase = .closed
        if ending == nil {
            end(.failed(CourierError(code: .connectionLost, message: "the WebSocket ended", url: url)), into: &effects)
        }
        let error = ending?.error ?? CourierError(code: .cancelled, message: "the WebSocket ended", url: url)
        effects.senders += senders.map { ($0, .failure(error)) }
        senders.removeAll()
        effects.pongs += pings.map { ($0.handler, error) }
        pings.removeAll()
        outgoing.removeAll()
        outgoingBytes = 0
        stream = nil
        // A direct write still uses the socket: it is closed once the claim comes back.
        if directWriteClaimed { teardownAfterDirectWrite = true } else { effects.teardown = true }
        if case .failed(let failure)? = ending { effects.completion = .some(failure) } else { effects.completion = .some(nil) }
    }
}

/// What the driver does after an event, outside the lock.
struct WebSocketEffects {
    var receivers: [(WebSocketConnectionState.Receiver, Result<WebSocketConnectionState.Message?, CourierError>)] = []
    var senders: [(WebSocketConnectionState.Sender, Result<Void, CourierError>)] = []
    var pongs: [(WebSocketConnectionState.PongHandler, (any Error)?)] = []
    var events: [TaskEvent] = []
    /// Bytes wait to be written.
    var flush = false
    /// The consumer caught up: read the socket again.
    var resumeReading = false
    /// The handshake succeeded: stop the open timer, start pings.
    var opened = false
    var armCloseTimer = false
    /// A failure waits for the consumer (``WebSocketConnectionState/pendingFailure``): bound the wait.
    var armFailureTimer = false
    /// Close the socket and stop every timer.
    var teardown = false
    /// The task completed, with this error (`.some(nil)`: cleanly).
    var completion: CourierError??
}
