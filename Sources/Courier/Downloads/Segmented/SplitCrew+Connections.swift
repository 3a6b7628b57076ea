import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A split download's requests: one per range, each on its connection's lane, each checked at its
/// head (``SegmentAnswerCheck``) before any of its bytes is written. The events a connection's
/// request causes: made, answered, data, ended.
extension SplitCrew {
    /// The request for `range` on `lane`: the first answer's request with `Range` for exactly that
    /// range, the map's validator as `If-Range`, no content coding, and `Connection: close` on a
    /// lane of its own. A lane connection left idle would stay open, unseen by any cap, until its
    /// URLSession is torn down (after the download ends, on its own queue), and a server that
    /// counts connections would see it beside the next download's (issue 30). A range costs a
    /// connection; ranges are large.
    func request(for range: Range<Int64>, lane: Int) -> URLRequest {
        var request = setup.request
        if lane > 0 { request.setValue("close", forHTTPHeaderField: "Connection") }
        request.setValue("bytes=\(range.lowerBound)-\(range.upperBound - 1)", forHTTPHeaderField: "Range")
        request.setValue(map.validator, forHTTPHeaderField: "If-Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        return request
    }

    /// The driver made connection `id`'s request: `true` when the crew still wants it (start it),
    /// `false` when it stopped or moved on meanwhile (never resumed, so nothing will report it).
    mutating func launched(_ id: ConnectionID, _ request: Request) -> Bool {
        guard !stopped, links[id] != nil, links[id]?.request == nil else { return false }
        links[id]?.request = request
        links[id]?.launching = false
        return true
    }

    /// The driver could not make or start connection `id`'s request (`request`, when it made
    /// one): the session is gone.
    mutating func launchFailed(_ id: ConnectionID, _ request: Request?, _ error: CourierError, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        failed(id, request, error, now: now, into: &actions)
        return actions
    }

    /// Connection `id`'s request was answered with `http` (a final response).
    mutating func answered(_ id: ConnectionID, _ request: Request, _ http: HTTPURLResponse, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        guard !stopped, let link = links[id], link.request === request, !link.accepted else { return actions }
        links[id]?.awaitingFirstAnswer = false
        let length: Int64?
        switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
        case .malformed(let value):
            end(.failed(.invalidResponse("a malformed Content-Length (\(value.debugDescription))", http)), now: now, into: &actions)
            return actions
        case .impossible(let value):
            // An answer no file has: this connection broke; another continues its range.
            refused(id, request, .impossibleLength(value, http), retryAfter: nil, now: now, into: &actions)
            return actions
        case .length(let value): length = value
        case .absent: length = nil
        }
        let answer = BodyFacts.answer(http, contentLength: length)
        switch SegmentAnswerCheck.segment(asked: link.asked, length: map.length, validator: map.validator, answer) {
        case .write:
            links[id]?.accepted = true
            links[id]?.rateStart = now
            links[id]?.mark?.statusCode = http.statusCode
            let answered = links.values.filter(\.accepted).count
            tally.peakConnections = max(tally.peakConnections, answered)
            // The connection the count added is answered: the next one may start now.
            if link.awaitingFirstAnswer { schedule(idle: nil, now: now, into: &actions) }
        case .restart(let why):
            end(.restart(why), now: now, into: &actions)
        case .fail(let why):
            end(.failed(.invalidResponse(why, http)), now: now, into: &actions)
        case .notBytes(let status):
            links[id]?.mark?.statusCode = status
            let error = CourierError(
                code: .unacceptableStatusCode, message: "the server answered HTTP \(status) to a segment's request",
                url: http.url, response: http)
            refused(id, request, error, retryAfter: RetryPolicy.requestedRetryDelay(of: http), now: now, into: &actions)
        }
        return actions
    }

    /// Any refusal (429, 503, a redirect, a 403…) is the server pushing back: fewer connections
    /// (AIMD), none asked before its `Retry-After`, and this one stops. Before issue 30, only 429
    /// and 503 did, and a lane answered 302 was asked again at once until the download failed.
    private mutating func refused(
        _ id: ConnectionID, _ request: Request, _ error: CourierError, retryAfter: Duration?, now: ContinuousClock.Instant,
        into actions: inout [Action]
    ) {
        let from = nextByte(of: id)
        backOff(retryAfter: retryAfter, now: now, into: &actions)
        failed(id, request, error, cancelling: true, from: from, now: now, into: &actions)
    }

    /// The next byte of the range connection `id` owns, if it owns one: where another continues it.
    func nextByte(of id: ConnectionID) -> Int64? {
        guard let index = map.index(of: id), map.segments[index].owner == id else { return nil }
        return map.segments[index].next
    }

    /// A chunk of connection `id`'s current request. Dropped when the request is no longer the
    /// connection's, or the crew has stopped: a file written at offsets is never appended to.
    mutating func received(_ id: ConnectionID, _ request: Request, _ data: Data, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        guard !stopped, let link = links[id], link.request === request, link.accepted else { return actions }
        tally.networkBytes += Int64(data.count)
        links[id]?.pending.append(data)
        links[id]?.windowBytes += Int64(data.count)
        windowBytes += Int64(data.count)
        let pending = Int64(links[id]?.pending.count ?? 0)
        let remaining = map.position(of: id)?.count ?? 0
        guard pending >= min(Int64(Self.batchBytes), Int64(remaining)) else { return actions }
        let advance = flush(id, into: &actions)
        if let record = recordIfDue(now: now) { actions.append(.record(record)) }
        if let advance { rangeAdvanced(id, advance, now: now, into: &actions) }
        actions.append(.progress(written: map.writtenBytes))
        return actions
    }

    /// What a write decided: a completed range frees its connection for more, a won race cancels the loser.
    private mutating func rangeAdvanced(
        _ id: ConnectionID, _ advance: SegmentMap.Advance, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        if let loser = advance.cancel { stopLink(loser, now: now, into: &actions) }
        if advance.completedRange {
            // Its range is done. Its request may go on past it (it was clipped by a steal): stop
            // it. The connection takes more once that request has ended, so the server never sees
            // it twice at once (``ended(_:_:error:now:)``).
            recordEnd(id, .completed, now: now)
            guard var link = links[id], let request = link.request else { return }
            link.cancelled = true
            link.accepted = false
            links[id] = link
            cancel(request, lane: link.lane, into: &actions)
        }
    }

    /// Connection `id`'s request ended, with `error` when its transport failed. `mine` is `false`
    /// when the crew has stopped: the transfer then handles its own request's ending itself.
    mutating func ended(
        _ id: ConnectionID, _ request: Request, error: CourierError?, now: ContinuousClock.Instant
    ) -> (mine: Bool, actions: [Action]) {
        var actions: [Action] = []
        guard !stopped else { return (false, actions) }
        if request === setup.primary { primaryEnded = true }
        let wasClosing = closing.removeValue(forKey: ObjectIdentifier(request)) != nil
        endingNow = ObjectIdentifier(request)
        defer { endingNow = nil }
        // An earlier request of this connection, stopped by the crew: the server let it go, so a
        // connection waiting for its place may start now (``held``).
        guard let link = links[id], link.request === request else {
            if wasClosing { schedule(idle: nil, now: now, into: &actions) }
            return (true, actions)
        }
        let advance = flush(id, into: &actions)
        if advance?.completedRange == true || map.position(of: id) == nil {
            recordEnd(id, .completed, now: now)
            links[id]?.request = nil
            links[id]?.accepted = false
            schedule(idle: id, now: now, into: &actions)
            return (true, actions)
        }
        recordEnd(id, link.cancelled ? .stopped : .failed, now: now)
        guard !link.cancelled else { return (true, actions) }
        guard let error else {
            failed(id, request, .invalidResponse("a segment's answer ended before its range did", nil), now: now, into: &actions)
            return (true, actions)
        }
        // The one rule for "may a later attempt succeed" (Docs/Retries.md): a connection's error
        // that no attempt gets past (TLS, DNS…) ends the crew, and the transfer's retry model
        // fails it with resume data. A cancel or a session going away is the driver's, not the
        // server's: its range is handed over as before.
        guard error.code.isTransient || error.code == .cancelled || error.code == .sessionInvalidated else {
            end(.failed(error), now: now, into: &actions)
            return (true, actions)
        }
        // A reset or a refused connection counts as the server pushing back (AIMD). The halving
        // may stop this very connection (the newest of equals): its range is handed over all the same.
        let from = nextByte(of: id)
        backOff(retryAfter: nil, now: now, into: &actions)
        failed(id, request, error, from: from, now: now, into: &actions)
        return (true, actions)
    }

    /// Connection `id` failed (`request`, when it ran): its range becomes idle with the bytes it
    /// wrote, another connection continues it, and the task announces the hand-over as a retry
    /// owned by a split connection (`from`: where the range continues, when known before a
    /// back-off stopped the connection). Too many failures in a row end the crew.
    mutating func failed(
        _ id: ConnectionID, _ request: Request?, _ error: CourierError, cancelling: Bool = false, from: Int64? = nil,
        now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        guard !stopped else { return }
        recordEnd(id, .failed, now: now)
        var handedOver = from
        if let link = links.removeValue(forKey: id) {
            if cancelling, let request = link.request ?? request { cancel(request, lane: link.lane, into: &actions) }
            handedOver = handedOver ?? nextByte(of: id)
            if let partner = map.release(id), let other = links.removeValue(forKey: partner), let otherRequest = other.request {
                cancel(otherRequest, lane: other.lane, into: &actions)
            }
            giveBack()
        }
        failuresWithoutProgress += 1
        if failuresWithoutProgress >= failureLimit { return end(.failed(error), now: now, into: &actions) }
        if let handedOver {
            let delay = quietUntil.map { max(.zero, $0 - now) } ?? .zero
            actions.append(
                .retry(
                    RangeRetry(
                        connection: id, error: error, retry: failuresWithoutProgress, limit: failureLimit, delay: delay,
                        bytesWritten: map.writtenBytes, continuesFrom: handedOver)))
        }
        schedule(idle: nil, now: now, into: &actions)
    }

    /// Gives each idle, untouched range back to the connection working just before it when that
    /// connection's request still streams those bytes (the first connection asked for the rest
    /// of the file): a range refused to its own connection is fetched without another request,
    /// and a server that allows one connection gets one that finishes the file.
    mutating func giveBack() {
        for (id, link) in links where link.accepted && link.request != nil && !link.cancelled {
            map.extend(id, through: link.asked.upperBound)
        }
    }

    /// Stops connection `id` (it lost an end-game race).
    mutating func stopLink(_ id: ConnectionID, now: ContinuousClock.Instant, into actions: inout [Action]) {
        _ = map.release(id)
        recordEnd(id, .stopped, now: now)
        guard let link = links.removeValue(forKey: id), let request = link.request else { return }
        cancel(request, lane: link.lane, into: &actions)
    }
}
