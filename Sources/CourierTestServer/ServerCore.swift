import Dispatch
import Foundation

/// The shared state behind a ``TestServer``: listener, connection threads, request log, files.
///
/// Kept separate from `TestServer` so that connection threads retain this core, not the
/// public object; dropping the last `TestServer` reference therefore runs its `deinit`, which stops everything.
final class ServerCore: Sendable {
    /// The listen backlog: well above the 500 simultaneous connects the tests make.
    static let backlog: Int32 = 1024

    let port: UInt16
    /// The host to put in URLs (`0.0.0.0` and `::` become loopback addresses).
    let urlHost: String
    let root: URL?
    let stopSignal: StopSignal
    let registry = ConnectionRegistry()
    let log = RequestLog()
    let files = FileStore()
    /// The bearer token `/authorized/…` accepts (TestServer.issueToken()).
    let tokens = TokenStore()
    /// The key `/signed` URLs are signed with: random per server, so a URL signed by one server
    /// means nothing to another.
    let signingKey = UUID().uuidString

    private let listener: Socket
    private let acceptorFinished = DispatchSemaphore(value: 0)
    private let connectionThreads = DispatchGroup()

    init(host: String, port: UInt16, root: URL?) throws {
        let (listener, boundPort, stopSignal) = try AcceptLoop.listen(host: host, port: port, backlog: Self.backlog)
        self.stopSignal = stopSignal
        self.listener = listener
        self.port = boundPort
        self.root = root
        switch host {
        case "0.0.0.0": urlHost = "127.0.0.1"
        case "::", "[::]": urlHost = "[::1]"
        case _ where host.contains(":") && !host.hasPrefix("["): urlHost = "[\(host)]"
        default: urlHost = host
        }
    }

    /// Starts the accept thread.
    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "CourierTestServer accept :\(port)"
        thread.start()
    }

    /// Accepts connections until stopped, starting one thread per connection.
    private func acceptLoop() {
        defer { acceptorFinished.signal() }
        AcceptLoop.run(
            listener: listener, stopSignal: stopSignal, registry: registry, threads: connectionThreads,
            name: "CourierTestServer"
        ) { [self] socket, id in
            Connection(socket: socket, id: id, core: self).run()
        }
    }

    /// Stops accepting, shuts down every connection, and waits (up to a few seconds) for the
    /// threads to finish. Idempotent.
    func stop() {
        guard registry.stopAll() else { return }
        stopSignal.fire()
        _ = acceptorFinished.wait(timeout: .now() + .seconds(5))
        _ = connectionThreads.wait(timeout: .now() + .seconds(5))
    }
}
