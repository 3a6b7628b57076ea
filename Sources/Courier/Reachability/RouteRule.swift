/// What follows a transport failure when the kernel may have no route to the host: the one rule
/// every task kind asks (a transfer in TransferState+Connectivity.swift, a WebSocket's open in
/// WebSocketDriver+Connectivity.swift). Pure: whether the route is gone is an argument, asked of
/// ``HostReachability`` by the caller outside any lock. Docs/Reachability.md.
enum RouteRule: Equatable, Sendable {
    /// Wait for a route (up to ``SessionManager/Configuration/waitsForConnectivity``), then try
    /// again; no retry is spent.
    case waitForRoute
    /// Fail at once with ``CourierError/Code-swift.struct/networkUnreachable``, naming the network.
    case failUnreachable

    /// The rule for `failure`, or `nil` when it does not apply (no failure, not a transport
    /// failure or a timeout, already `networkUnreachable`, or the host has a route).
    /// `waitsForConnectivity`: the task may wait now; `maySendAgain`: what failed may be sent again
    /// (nothing was sent when no connection was made, so a refusal or a DNS failure always may).
    static func after(
        _ failure: CourierError?, routeIsGone: Bool, waitsForConnectivity: Bool, maySendAgain: @autoclosure () -> Bool
    ) -> RouteRule? {
        // A timeout counts: a link that went away mid-transfer shows as silence.
        guard let failure, failure.isTransport || failure.code == .timedOut, failure.code != .networkUnreachable, routeIsGone
        else { return nil }
        let nothingSent = failure.code == .connectionRefused || failure.code == .dnsFailed
        return waitsForConnectivity && (nothingSent || maySendAgain()) ? .waitForRoute : .failUnreachable
    }
}
