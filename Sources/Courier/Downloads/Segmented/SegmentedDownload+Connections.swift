import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A segmented download's requests: one per range, each on its connection's lane, each checked
/// at its head (``SegmentAnswerCheck``) before any of its bytes is written.
extension SegmentedDownload {
    /// Routes one request's callbacks to its crew (the lane's table holds it until the request ends).
    final class LinkDelegate: TaskDelegate {
        let crew: SegmentedDownload
        let id: ConnectionID

        init(crew: SegmentedDownload, id: ConnectionID) {
            self.crew = crew
            self.id = id
        }

        func urlTask(_ task: URLSessionTask, didReceive response: URLResponse) {
            guard let http = response as? HTTPURLResponse, !(100..<200).contains(http.statusCode) else { return }
            crew.linkResponse(id, task, http)
        }
        func urlTask(_ task: URLSessionTask, didReceive data: Data) { crew.linkData(id, task, data) }
        func urlTask(_ task: URLSessionTask, didSendBodyData bytesSent: Int64) {}
        func urlTaskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream? { nil }
        func urlTask(_ task: URLSessionTask, willRedirectTo request: URLRequest, response: HTTPURLResponse) -> URLRequest? {
            // A segment's request goes to the URL that served the first answer: a redirect now
            // could lead to another version, so it is not followed (its 3xx is not a 206).
            nil
        }
        func urlTaskDidRejectChallenge(_ task: URLSessionTask) {}
        func urlTask(_ task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            _ = crew.linkEnded(id, task, error)
        }
        func urlTaskLeftHostQueue(_ task: URLSessionTask) {}
    }

    /// The request for `range` on `lane`: the first answer's request with `Range` for exactly that
    /// range, the map's validator as `If-Range`, no content coding, and `Connection: close` on a
    /// lane of its own (see ``launch(_:lane:range:)``).
    func request(for range: Range<Int64>, lane: Int) -> URLRequest {
        var request = setup.request
        if lane > 0 { request.setValue("close", forHTTPHeaderField: "Connection") }
        request.setValue("bytes=\(range.lowerBound)-\(range.upperBound - 1)", forHTTPHeaderField: "Range")
        request.setValue(setup.map.validator, forHTTPHeaderField: "If-Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        return request
    }

    /// Makes and starts connection `id`'s request for `range` on its lane, on the call queue.
    /// A lane's request asks the server to close the connection after its answer: a lane
    /// connection left idle would stay open, unseen by any cap, until its URLSession is torn down
    /// (after the download ends, on its own queue), and a server that counts connections would see
    /// it beside the next download's (issue 30). A range costs a connection; ranges are large.
    func launch(_ id: ConnectionID, lane: Int, range: Range<Int64>) {
        let request = request(for: range, lane: lane)
        guard let core = core(for: lane) else {
            return linkFailed(id, nil, .sessionInvalidated(url: request.url))
        }
        core.table.noteStarting()
        core.callQueue.async { [self] in
            guard let task = core.makeTask({ $0.dataTask(with: request) }) else {
                core.table.dropStarting()
                return linkFailed(id, nil, .sessionInvalidated(url: request.url))
            }
            let current = state.withLock { state -> Bool in
                guard !state.stopped, state.links[id] != nil, state.links[id]?.task == nil else { return false }
                state.links[id]?.task = task
                return true
            }
            guard current else {
                // Stopped meanwhile: never resumed, so nothing will report it.
                core.table.dropStarting()
                return
            }
            let origin = RedirectPolicy.origin(of: request.url) ?? ""
            guard core.start(task, origin: origin, delegate: LinkDelegate(crew: self, id: id)) else {
                return linkFailed(id, task, .sessionInvalidated(url: request.url))
            }
            // Stopped while it was being started: its completion ends it.
            if state.withLock({ $0.stopped }) { core.cancel(task) }
        }
    }

    // MARK: - Callbacks

    func linkResponse(_ id: ConnectionID, _ task: URLSessionTask, _ http: HTTPURLResponse) {
        enum Verdict { case none, write(chained: Bool), refused(CourierError, retryAfter: Duration?), end(Ending) }
        let verdict = state.withLock { state -> Verdict in
            guard !state.stopped, let link = state.links[id], link.task === task, !link.accepted else { return .none }
            state.links[id]?.awaitingFirstAnswer = false
            let length: Int64?
            switch ContentLength.parse(http.value(forHTTPHeaderField: "Content-Length")) {
            case .malformed(let value):
                return .end(.failed(.invalidResponse("a malformed Content-Length (\(value.debugDescription))", http)))
            case .impossible(let value):
                // An answer no file has: this connection broke; another continues its range.
                return .refused(.impossibleLength(value, http), retryAfter: nil)
            case .length(let value): length = value
            case .absent: length = nil
            }
            let answer = FileBody.answer(http, contentLength: length)
            switch SegmentAnswerCheck.segment(asked: link.asked, length: state.map.length, validator: state.map.validator, answer) {
            case .write:
                state.links[id]?.accepted = true
                state.links[id]?.rateStart = .now
                state.links[id]?.mark?.statusCode = http.statusCode
                let answered = state.links.values.filter(\.accepted).count
                state.tally.peakConnections = max(state.tally.peakConnections, answered)
                return .write(chained: link.awaitingFirstAnswer)
            case .restart(let why):
                return .end(.restart(why))
            case .fail(let why):
                return .end(.failed(.invalidResponse(why, http)))
            case .notBytes(let status):
                state.links[id]?.mark?.statusCode = status
                let error = CourierError(
                    code: .unacceptableStatusCode, message: "the server answered HTTP \(status) to a segment's request",
                    url: http.url, response: http)
                return .refused(error, retryAfter: RetryPolicy.requestedRetryDelay(of: http))
            }
        }
        switch verdict {
        case .none, .write(chained: false): break
        case .write(chained: true):
            // The connection the count added is answered: the next one may start now.
            schedule(idle: nil)
        case .end(let ending): end(ending)
        case .refused(let error, let retryAfter):
            // Any refusal (429, 503, a redirect, a 403…) is the server pushing back: fewer
            // connections (AIMD), none asked before its Retry-After, and this one stops. Before,
            // only 429 and 503 did, and a lane answered 302 was asked again at once until the
            // download failed.
            backOff(retryAfter: retryAfter)
            linkFailed(id, task, error, cancelling: true)
        }
    }

    /// A chunk of connection `id`'s current request. Dropped when the request is no longer the
    /// connection's, or the crew has stopped: a file written at offsets is never appended to.
    func linkData(_ id: ConnectionID, _ task: URLSessionTask, _ data: Data) {
        let outcome = state.withLock { state -> (advance: SegmentMap.Advance?, progress: Int64?, record: SegmentMap?) in
            guard !state.stopped, let link = state.links[id], link.task === task, link.accepted else { return (nil, nil, nil) }
            state.tally.networkBytes += Int64(data.count)
            state.links[id]?.pending.append(data)
            state.links[id]?.windowBytes += Int64(data.count)
            state.windowBytes += Int64(data.count)
            let pending = Int64(state.links[id]?.pending.count ?? 0)
            let remaining = state.map.position(of: id)?.count ?? 0
            guard pending >= min(Int64(Self.batchBytes), Int64(remaining)) else { return (nil, nil, nil) }
            let advance = flush(id, &state)
            return (advance, state.map.writtenBytes, recordIfDue(&state))
        }
        if let record = outcome.record { host?.segmentsRecord(record) }
        if let advance = outcome.advance { rangeAdvanced(id, advance) }
        if let written = outcome.progress { host?.segmentsProgressed(written: written) }
    }

    /// What a write decided: a completed range frees its connection for more, a won race cancels the loser.
    private func rangeAdvanced(_ id: ConnectionID, _ advance: SegmentMap.Advance) {
        if let loser = advance.cancel { stopLink(loser) }
        if advance.completedRange {
            // Its range is done. Its request may go on past it (it was clipped by a steal): stop
            // it. The connection takes more once that request has ended, so the server never sees
            // it twice at once (linkEnded).
            let task = state.withLock { state -> (Int, URLSessionTask)? in
                Self.recordEnd(id, .completed, &state)
                guard var link = state.links[id], let task = link.task else { return nil }
                link.cancelled = true
                link.accepted = false
                state.links[id] = link
                return (link.lane, task)
            }
            if let task { cancel([task]) }
        }
    }

    /// Connection `id`'s request ended. `false` when it was not the crew's (stopped meanwhile): the
    /// transfer then handles its own task's ending itself.
    func linkEnded(_ id: ConnectionID, _ task: URLSessionTask, _ error: (any Error)?) -> Bool {
        enum Outcome { case notMine, done, rangeComplete, failed }
        let isPrimary = task === setup.primary
        let outcome = state.withLock { state -> Outcome in
            guard !state.stopped else { return .notMine }
            if isPrimary { state.primaryEnded = true }
            // An earlier request of this connection, stopped by the crew: nothing to decide.
            guard let link = state.links[id], link.task === task else { return .done }
            let advance = flush(id, &state)
            if advance?.completedRange == true || state.map.position(of: id) == nil {
                Self.recordEnd(id, .completed, &state)
                state.links[id]?.task = nil
                state.links[id]?.accepted = false
                return .rangeComplete
            }
            Self.recordEnd(id, link.cancelled ? .stopped : .failed, &state)
            return link.cancelled ? .done : .failed
        }
        switch outcome {
        case .notMine: return false
        case .done: break
        case .rangeComplete: schedule(idle: id)
        case .failed:
            let problem: CourierError
            if let error {
                problem = .transport(error, url: setup.request.url, response: nil, tls: nil)
                // A reset or a refused connection counts as the server pushing back (AIMD).
                backOff(retryAfter: nil)
            } else {
                problem = .invalidResponse("a segment's answer ended before its range did", nil)
            }
            linkFailed(id, task, problem)
        }
        return true
    }

    /// Connection `id` failed (`task`, when it ran): its range becomes idle with the bytes it
    /// wrote, and another connection continues it. Too many failures in a row end the crew.
    func linkFailed(_ id: ConnectionID, _ task: URLSessionTask?, _ error: CourierError, cancelling: Bool = false) {
        let outcome = state.withLock { state -> (giveUp: Bool, cancel: [(Int, URLSessionTask)]) in
            guard !state.stopped else { return (false, []) }
            var cancels: [(Int, URLSessionTask)] = []
            Self.recordEnd(id, .failed, &state)
            if let link = state.links.removeValue(forKey: id) {
                if cancelling, let task = link.task ?? task { cancels.append((link.lane, task)) }
                if let partner = state.map.release(id), let other = state.links.removeValue(forKey: partner),
                    let otherTask = other.task
                {
                    cancels.append((other.lane, otherTask))
                }
                Self.giveBack(&state)
            }
            state.failuresWithoutProgress += 1
            state.lastFailure = error
            return (state.failuresWithoutProgress >= failureLimit, cancels)
        }
        cancel(outcome.cancel)
        if outcome.giveUp { return end(.failed(error)) }
        schedule(idle: nil)
    }

    /// Gives each idle, untouched range back to the connection working just before it when that
    /// connection's request still streams those bytes (the first connection asked for the rest
    /// of the file): a range refused to its own connection is fetched without another request,
    /// and a server that allows one connection gets one that finishes the file.
    static func giveBack(_ state: inout State) {
        for (id, link) in state.links where link.accepted && link.task != nil && !link.cancelled {
            state.map.extend(id, through: link.asked.upperBound)
        }
    }

    /// Stops connection `id` (the scheduler wants fewer, or it lost an end-game race).
    func stopLink(_ id: ConnectionID) {
        let task = state.withLock { state -> (Int, URLSessionTask)? in
            _ = state.map.release(id)
            Self.recordEnd(id, .stopped, &state)
            guard let link = state.links.removeValue(forKey: id) else { return nil }
            return link.task.map { (link.lane, $0) }
        }
        if let task { cancel([task]) }
    }
}
