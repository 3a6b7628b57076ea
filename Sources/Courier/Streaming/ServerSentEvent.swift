/// One event of a `text/event-stream` (Server-Sent Events) response, as the WHATWG HTML
/// standard's event stream interpretation dispatches it.
///
/// Comments, `retry:`-only blocks and blocks without any `data:` field are not events; the
/// parser still applies what they carry (a new last event ID, a new reconnection time).
public struct ServerSentEvent: Sendable, Hashable, Codable {
    /// The event type: the block's last `event:` field, or `"message"` when the block had none
    /// (or its last one was empty).
    public var event: String
    /// The block's `data:` field values joined with `"\n"`. A block with a bare `data` line has
    /// empty data; two bare `data` lines give `"\n"`.
    public var data: String
    /// The `id:` field of this block, if it had a valid one (a value containing U+0000 NULL is
    /// ignored). An empty `id:` gives `""`, which also clears ``lastEventID``.
    public var id: String?
    /// The stream's last event ID when this event was dispatched: the most recent valid `id:`
    /// field, from this block or an earlier one. A reconnecting client sends it back in the
    /// `Last-Event-ID` header. `""` when there is none.
    public var lastEventID: String
    /// The reconnection time from a valid `retry:` field of this block (milliseconds, all ASCII
    /// digits), if any.
    public var retry: Duration?

    /// Creates an event; the defaults are those of a block with only `data:` lines.
    /// - Parameters:
    ///   - event: The event type (`"message"` unless the block named another).
    ///   - data: The data lines joined with `"\n"`.
    ///   - id: The block's own `id:` field, if any.
    ///   - lastEventID: The stream's last event ID at dispatch.
    ///   - retry: The block's valid `retry:` field, if any.
    public init(
        event: String = "message", data: String, id: String? = nil, lastEventID: String = "",
        retry: Duration? = nil
    ) {
        self.event = event
        self.data = data
        self.id = id
        self.lastEventID = lastEventID
        self.retry = retry
    }
}
