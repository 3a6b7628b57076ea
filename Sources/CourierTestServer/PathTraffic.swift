/// What the server saw of one path's responses (`/bytes/…`, `/files/…`, `/stream-bytes/…`,
/// `/signed/bytes/…`): how many ran at once, how many it refused with 429, and how many body
/// bytes it really wrote. Read it with ``TestServer/traffic(for:)``.
///
/// Counted since the server started, or since the last ``TestServer/clearRequests()``, which
/// starts every count afresh (responses still in flight stay counted as in flight).
public struct PathTraffic: Sendable, Equatable {
    /// One refusal given because of `max_conns` (a 429, or what `refuse=` asks for).
    public struct Refusal: Sendable, Equatable {
        /// When it was given.
        public let at: ContinuousClock.Instant
        /// How many responses of the path were in flight then (at least the `max_conns` limit).
        public let inFlight: Int

        /// Creates a record (the server makes these; public so tests can build fixtures).
        public init(at: ContinuousClock.Instant, inFlight: Int) {
            self.at = at
            self.inFlight = inFlight
        }
    }

    /// Responses admitted (everything but the 429s), finished or not.
    public internal(set) var responses = 0
    /// Responses in flight now: admitted and not yet fully written.
    public internal(set) var inFlight = 0
    /// The most responses in flight at once.
    public internal(set) var peakInFlight = 0
    /// Every refusal given because of `max_conns`, in order.
    public internal(set) var refusals: [Refusal] = []
    /// Body bytes written to sockets, summed over responses (bytes of writes that completed;
    /// framing and heads are not counted). Above the file's size, it is what was fetched again.
    public internal(set) var bodyBytesServed: Int64 = 0
    /// The connection whose response `slow_at` slowed down, once that happened.
    public internal(set) var slowedConnectionID: Int?

    /// How many 429s were given because of `max_conns`.
    public var tooManyRequests: Int { refusals.count }

    /// No traffic.
    public init() {}
}
