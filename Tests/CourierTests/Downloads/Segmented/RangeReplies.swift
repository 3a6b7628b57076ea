import CourierTestServer
import Foundation

/// Scripted answers to `Range` requests, for the split-download tests' hostile servers.
enum RangeReplies {
    /// The asked range of a `Range: bytes=a-b` or `bytes=a-` header, clipped to `total`.
    static func asked(_ request: RecordedRequest, total: Int) -> Range<Int>? {
        guard let value = request.header("Range"), value.hasPrefix("bytes=") else { return nil }
        let parts = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]) else { return nil }
        let end = parts[1].isEmpty ? total : (Int(parts[1]) ?? total - 1) + 1
        return start..<min(end, total)
    }

    /// `range` of `body` with `headers` as a 206 (or the whole body as a 200 when `range` is
    /// `nil`), sent in 64 KiB writes `pause` ms apart; with `cutAfter`, the connection is reset
    /// once that many body bytes are sent.
    static func answer(
        _ body: Data, _ range: Range<Int>?, headers: [(String, String)], pause: Int = 0, cutAfter: Int? = nil
    ) -> ScriptedServer.Reply {
        let span = range ?? 0..<body.count
        var fields = headers + [("Content-Length", "\(span.count)")]
        if let range { fields.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.count)")) }
        let head =
            range == nil
            ? ScriptedServer.Reply.head(status: 200, headers: fields)
            : ScriptedServer.Reply.head(status: 206, reason: "Partial Content", headers: fields)
        var steps: [ScriptedServer.Reply.Step] = [.send(head)]
        let stop = min(span.upperBound, span.lowerBound + (cutAfter ?? span.count))
        var offset = span.lowerBound
        while offset < stop {
            let next = min(offset + 65_536, stop)
            steps.append(.send(body.subdata(in: offset..<next)))
            if pause > 0 { steps.append(.pause(milliseconds: pause)) }
            offset = next
        }
        return ScriptedServer.Reply(steps, ending: cutAfter == nil ? .close : .reset)
    }

    /// `range` of `body` as a 206 whose first `fast` bytes go in 64 KiB writes `pause` ms apart,
    /// and the rest 512 bytes every `trickle` ms: a connection that slows to a crawl.
    static func trickling(
        _ body: Data, _ range: Range<Int>, headers: [(String, String)], fast: Int, pause: Int = 0, trickle: Int
    ) -> ScriptedServer.Reply {
        var reply = answer(body, range, headers: headers, pause: pause, cutAfter: fast)
        var offset = range.lowerBound + fast
        while offset < range.upperBound {
            reply.steps.append(.send(body.subdata(in: offset..<min(offset + 512, range.upperBound))))
            reply.steps.append(.pause(milliseconds: trickle))
            offset += 512
        }
        reply.ending = .close
        return reply
    }
}
