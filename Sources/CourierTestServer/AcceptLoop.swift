import Foundation

/// The accept loop both servers run: accept until stopped, one thread per connection.
enum AcceptLoop {
    /// Binds `host`:`port` and makes the stop signal the loop waits on; closes the listener again
    /// if the signal cannot be made.
    static func listen(host: String, port: UInt16, backlog: Int32) throws -> (Socket, UInt16, StopSignal) {
        let (listener, bound) = try Socket.listen(host: host, port: port, backlog: backlog)
        do {
            return (listener, bound, try StopSignal())
        } catch {
            listener.close()
            throw error
        }
    }

    /// Accepts connections on `listener` until `stopSignal` fires (or the listener fails),
    /// registering each in `registry` and serving it with `serve` on a thread of its own, inside
    /// `threads`. `serve` owns the socket: it unregisters and closes it. Closes the listener at the end.
    static func run(
        listener: Socket, stopSignal: StopSignal, registry: ConnectionRegistry, threads: DispatchGroup, name: String,
        serve: @escaping @Sendable (Socket, Int) -> Void
    ) {
        defer { listener.close() }
        while stopSignal.waitReadable(listener.fd, timeoutMilliseconds: -1) == .readable {
            switch listener.accept() {
            case .accepted(let socket):
                guard let id = registry.register(socket) else {
                    socket.close()
                    return
                }
                socket.setNoDelay()
                threads.enter()
                let thread = Thread {
                    serve(socket, id)
                    threads.leave()
                }
                thread.name = "\(name) connection \(id)"
                thread.start()
            case .retry:
                // Out of descriptors or a handshake aborted: back off briefly instead of spinning.
                _ = stopSignal.sleep(milliseconds: 5)
            case .failed:
                return
            }
        }
    }
}
