import Foundation
import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkCommands {
    /// `network-ws WAIT_SECONDS|none`: serves on all addresses, prints `server <port>`, opens a
    /// WebSocket to `ws://127.0.0.1:<port>/ws/echo` with waitsForConnectivity, printing pause
    /// events, sends `hello` and prints `completed echo=<text> pauses=<reasons>` or `failed <code>
    /// <message>`.
    static func webSocket(wait: Double?) throws -> Int32 {
        let (server, port, manager) = try serveAndMakeManager(wait: wait)
        let task = manager.webSocketTask(with: URL(string: "ws://127.0.0.1:\(port)/ws/echo")!)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                task.resume()
                try await task.send(.string("hello"))
                let message = try await task.receive()
                let text: String
                if case .string(let string) = message { text = string } else { text = "binary" }
                let pauses = task.metrics.pauses.map(\.reason.rawValue).joined(separator: ",")
                say("completed echo=\(text) pauses=\(pauses)")
                task.cancel(with: .normalClosure, reason: nil)
            } catch let error as CourierError {
                say("failed \(error.code) \(error.message)")
            } catch {
                say("failed \(error)")
            }
            done.signal()
        }
        done.wait()
        withExtendedLifetime(server) {}  // serving until the end
        return 0
    }
}
