/// One admitted response of a tracked path, as its writer sees it: it reports the body bytes it
/// writes (and learns whether `slow_at` divided its rate), then says it is done. The counting
/// itself lives in `PathTrafficState`, behind `RequestLog`'s lock.
final class ResponseFlow: Sendable {
    private let log: RequestLog
    private let path: String
    private let id: Int
    private let slowDown: SlowDown?

    /// `slow_at=B&slow_factor=F`.
    struct SlowDown: Sendable, Equatable {
        /// Body bytes of the path, all responses together, after which one response slows.
        let after: Int
        /// What its rate is divided by.
        let factor: Int
    }

    init(log: RequestLog, path: String, id: Int, slowDown: SlowDown?) {
        self.log = log
        self.path = path
        self.id = id
        self.slowDown = slowDown
    }

    /// Counts `bytes` written; returns what this response's rate is divided by from now on.
    func served(_ bytes: Int) -> Int {
        log.served(bytes, path: path, id: id, slowDown: slowDown.map { ($0.after, $0.factor) })
    }

    /// The response is written (or abandoned): it no longer counts as in flight. Idempotent.
    func finish() {
        log.finish(path: path, id: id)
    }
}
