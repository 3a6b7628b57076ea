/// The thread-safe, append-only record of requests the server has received.
final class RequestLog: Sendable {
    private let entries = Locked<[RecordedRequest]>([])

    /// Appends one request.
    func append(_ request: RecordedRequest) {
        entries.withLock { $0.append(request) }
    }

    /// A snapshot of every request so far, in arrival order.
    var snapshot: [RecordedRequest] { entries.withLock { $0 } }

    /// Forgets every recorded request.
    func clear() {
        entries.withLock { $0.removeAll() }
    }
}
