import Foundation
import Courier

/// `--wait-for-network`: the manager waits for a route to the host (``SessionManager/Configuration/waitsForConnectivity``)
/// and the command says so on stderr; without it, a host with no route fails at once with exit 3
/// and the library's message, which names the network.
extension GetCommand {
    /// Sets the wait from `options` and adds the monitor that prints its start and end (unless quiet).
    static func applyNetworkWait(
        _ options: Options, to configuration: inout SessionManager.Configuration, say: @escaping @Sendable (String) -> Void
    ) {
        guard let seconds = options.waitForNetwork else { return }
        configuration.waitsForConnectivity = .seconds(roundingUp: seconds)
        guard !options.quiet else { return }
        let limit = seconds
        configuration.eventMonitors.append(
            ClosureEventMonitor(onEvent: { task, event in
                let host = task.originalRequest.url?.host ?? "the host"
                switch event {
                case .paused(let pause) where pause.reason == .connectivity:
                    say(networkWaitLine(host: host, seconds: limit))
                case .pauseEnded(let pause) where pause.reason == .connectivity:
                    say("courier: the network is back: a route to \(host) appeared; continuing")
                default: break
                }
            }))
    }

    /// `courier: the network is unreachable (no route to example.com); waiting up to 30 s for it`
    static func networkWaitLine(host: String, seconds: Double) -> String {
        let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return "courier: the network is unreachable (no route to \(host)); waiting up to \(shown) s for it"
    }
}
