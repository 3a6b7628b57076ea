import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A split download's decisions on the transfer's state (Docs/SegmentedDownloads.md): when a 206
/// turns the download into several connections, what a map to continue must match, and what the
/// transfer keeps when its crew stops, what its progress and retries mean for the task. The crew's
/// own rules are SplitCrew*.swift's (Downloads/Segmented).
extension TransferState {
    /// What a 206 that continues the bytes held means for a split download.
    enum SplitDecision: Equatable {
        /// One stream, as without a split.
        case none
        /// Split over this map; the current attempt works on the range from the offset on.
        case begin(SegmentMap)
        /// A map to continue does not fit the answer: its bytes cannot be trusted.
        case restart(String)
    }

    /// The first connection's identity in a new crew's map.
    static let primaryConnection = ConnectionID(1)
    /// A download smaller than this is not split: a second request costs more than it saves.
    static let smallestSplit: Int64 = 2 * SegmentScheduler.Configuration().minimumSplit

    /// Decides whether the 206 answering this attempt (bytes `offset` to `end`) starts a split
    /// download: the policy asks for one (or a map is being continued), it is a plain GET, the
    /// answer carries the file's complete length and a strong entity tag (never a date alone:
    /// ``StrongValidator/bindsSegments(_:)``), comes from the origin
    /// asked (a redirect elsewhere is one stream), and what is left is worth a second connection.
    func segmentsToBegin(_ http: HTTPURLResponse, offset: Int64, end: Int64, _ plan: DownloadPlan) -> SplitDecision {
        let continued = file?.segments
        guard (plan.policy.split.isSplit && file?.splitRefused != true) || continued != nil else { return .none }
        func notSplit(_ why: String) -> SplitDecision { continued == nil ? .none : .restart(why) }
        let request = context.originalRequest
        guard (request.httpMethod ?? "GET").uppercased() == "GET", context.upload == nil,
            let url = request.url.map(ResumeData.withoutCredentials)
        else { return notSplit("a segment map for a request that is not a plain GET") }
        guard let total = expectedToReceive, end == total, let validator, !BodyFacts.isEncoded(http) else {
            return notSplit("the answer does not bind the segments to one complete, unencoded version")
        }
        guard StrongValidator.bindsSegments(validator) else {
            return notSplit("only a date (Last-Modified) names the version, and a date cannot bind ranges to one version")
        }
        guard RedirectPolicy.origin(of: http.url) == RedirectPolicy.origin(of: currentRequest?.url ?? request.url) else {
            return notSplit("the answer came from another origin than the one asked")
        }
        var map: SegmentMap
        if let continued {
            guard continued.url == url, continued.validator == validator, continued.length == total,
                continued.segments.first?.next == offset
            else { return .restart("the segment map kept for this download does not match the server's answer") }
            map = continued.withoutConnections
        } else {
            guard total - offset >= Self.smallestSplit else { return .none }
            do {
                map = try SegmentMap(
                    url: url, validator: validator, length: total,
                    segments: [SegmentMap.Segment(start: 0, end: total, written: offset)])
            } catch {
                return .none
            }
        }
        guard let first = map.segments.first, (try? map.assign(Self.primaryConnection, range: offset..<first.end)) != nil
        else { return notSplit("the segment map has no range at the offset asked") }
        return .begin(map)
    }

    /// The request that starts a download over: a split one asks `bytes=0-`, so that its first
    /// answer can prove ranges again; any other asks the whole body. What the old version's
    /// answers said (validator, length) is forgotten.
    mutating func freshRequest() -> URLRequest {
        guard file?.plan.policy.split.isSplit == true else { return context.originalRequest }
        validator = nil
        expectedToReceive = nil
        return rangeRequest(context.originalRequest, from: 0, validator: nil)
    }

    /// Takes back what a crew leaves: its map (continued by the next attempt's first 206), the
    /// written prefix as the bytes held, and its counts for the report.
    mutating func adoptSegments(_ map: SegmentMap, tally: SplitCrew<URLSessionTask>.Tally) {
        let peak = max(file?.peakConnections ?? 1, tally.peakConnections)
        file?.peakConnections = peak
        file?.diskPauses += tally.diskPauses
        file?.bytesFromNetwork += tally.networkBytes
        // The connections' requests, on the task's clock, for its timeline.
        metrics.segmentRequests(
            tally.requests.map { mark in
                var request = TaskMetrics.SegmentRequest(
                    connection: mark.connection, range: mark.range, start: metrics.offset(of: mark.start))
                request.end = mark.end.map(metrics.offset(of:))
                request.statusCode = mark.statusCode
                request.bytesWritten = mark.bytesWritten
                request.ending = mark.ending
                return request
            })
        if map.isComplete {
            file?.segments = nil
            received = map.length
        } else {
            file?.segments = map
            received = map.contiguousPrefix
        }
    }

    /// What the transfer does when its crew ended by itself, the crew's first connection being
    /// `primary`: the same completion and retry decisions as one stream's (TransferState+Downloads.swift).
    mutating func segmentsEnded(_ ending: SplitCrew<URLSessionTask>.Ending, primary: URLSessionTask, facts: AttemptFacts) -> FollowUp? {
        guard let plan = file?.plan, phase.isCurrent(primary) else { return nil }
        switch ending {
        case .complete:
            spanEnd = expectedToReceive
            return downloadCompletion(nil, plan, facts: facts)
        case .failed(let error):
            return retryFollowUp(after: error, facts: facts) ?? .finish(finishFailedDownload(error, plan))
        case .restart(let why):
            // The server's ranges cannot be trusted: the file starts over as one stream.
            file?.splitRefused = true
            if let problem = startOver(.answerDidNotContinue(why, response)) { return .finish(complete(error: problem)) }
            return .restart(freshRequest())
        }
    }

    /// The crew's bytes so far: the task's progress, and the observers due to hear of it.
    mutating func segmentsProgressed(written: Int64) -> ([ProgressObserver], Progress)? {
        received = written
        return dueProgress(.download)
    }

    /// A range the crew handed to another connection after its own failed: announced as the
    /// task's retry, owned by a split connection (Docs/Retries.md). The attempt goes on: no
    /// retry of the task's own policy is used.
    mutating func announce(_ retry: SplitCrew<URLSessionTask>.RangeRetry) {
        emit(
            .retrying(
                TaskRetryEvent(
                    error: retry.error, retry: retry.retry, retryLimit: retry.limit, delay: retry.delay,
                    bytesReceived: retry.bytesWritten, continuesFrom: retry.continuesFrom, owner: .splitConnection)))
    }
}
