import Courier
import CourierSupport
import Foundation

extension PostgresQueueStore {
    /// Waits until work may be there — an item added, or one completed, failed or released (which
    /// frees a slot on its host) by any worker of the database — or until `timeout` seconds pass.
    /// Returns `true` for a notification (also one that arrived since the previous call
    /// returned), `false` for the timeout or a closed store. When the `LISTEN` connection breaks
    /// (the server restarted), it is opened again, and waiters are woken once it listens: what was
    /// sent meanwhile is lost.
    /// Nothing polls: the `LISTEN` connection's socket is watched by a `DispatchSource`.
    ///
    /// A worker's loop: lease until ``lease(worker:duration:maximumPerHost:)`` returns `nil`, then
    /// wait here (with a timeout as long as a lease, so that expired leases are taken over even
    /// when no notification comes: an expiry sends none).
    public func waitForWork(timeout: TimeInterval) async -> Bool {
        await listener.wait(timeout: timeout)
    }

    /// The `LISTEN courier_queue` connection and the tasks waiting for its notifications.
    ///
    /// When the connection breaks (the server restarted), it is opened again after 1 s, then 2, 4…
    /// up to 30 s between tries; once it listens again every waiter is woken, since notifications
    /// sent meanwhile were lost.
    final class Listener: Sendable {
        struct State {
            var waiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
            /// A notification arrived while nobody waited: the next wait returns at once.
            var pending = false
            var closed = false
            /// The connection being watched; `nil` while it is being opened again.
            var connection: PostgresConnection?
            /// The socket's watcher (in the state: a dispatch source is not `Sendable`).
            var source: (any DispatchSourceRead)?
        }

        /// Only ever passed to libpq, never shown.
        private let connectionString: String
        private let libpq: LibPQ
        private let queue = DispatchQueue(label: "courier.postgres.listen")
        let state = Locked(State())

        init(_ connectionString: String, libpq: LibPQ) throws(CourierError) {
            self.connectionString = connectionString
            self.libpq = libpq
            attach(try Self.listen(connectionString, libpq: libpq))
        }

        /// A new connection that has run `LISTEN courier_queue`.
        private static func listen(_ connectionString: String, libpq: LibPQ) throws(CourierError) -> PostgresConnection {
            let connection = try PostgresConnection(connectionString, libpq: libpq)
            do throws(PostgresConnection.Failure) {
                _ = try connection.execute("LISTEN courier_queue")
            } catch {
                connection.close()
                throw error.error
            }
            return connection
        }

        /// Watches `connection`'s socket; returns `false` (and closes it) when the listener is closed.
        @discardableResult
        private func attach(_ connection: PostgresConnection) -> Bool {
            let source = DispatchSource.makeReadSource(fileDescriptor: connection.socket(), queue: queue)
            // libpq owns the socket: it is closed by PQfinish, once the source can no longer read it.
            source.setCancelHandler { connection.close() }
            source.setEventHandler { [weak self] in self?.readable(connection) }
            let attached = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.connection = connection
                state.source = source
                // Under the lock: a close() cancelling it before its resume would leave a suspended
                // source to be released, which libdispatch traps on.
                source.resume()
                return true
            }
            if !attached { connection.close() }
            return attached
        }

        /// The socket has data: drain the notifications and wake every waiter.
        private func readable(_ connection: PostgresConnection) {
            let (count, alive) = connection.drainNotifications()
            guard count > 0 || !alive else { return }
            let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                // A broken connection reads as always readable: stop watching it.
                if !alive, state.connection === connection {
                    state.source?.cancel()
                    state.source = nil
                    state.connection = nil
                }
                guard count > 0 else { return [] }
                return wakeAll(&state)
            }
            for waiter in woken { waiter.resume(returning: true) }
            if !alive { reconnect(after: 1) }
        }

        /// Takes every waiter out of `state` to be woken; remembers the wake-up when none waits.
        private func wakeAll(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
            let woken = Array(state.waiters.values)
            state.waiters = [:]
            if woken.isEmpty { state.pending = true }
            return woken
        }

        /// Opens the connection again after `delay`, doubling it (to 30 s) while that fails.
        private func reconnect(after delay: TimeInterval) {
            queue.asyncAfter(deadline: .now() + delay) { [weak self] in
                guard let self, !self.state.withLock({ $0.closed }) else { return }
                do throws(CourierError) {
                    guard self.attach(try Self.listen(self.connectionString, libpq: self.libpq)) else { return }
                    let woken = self.state.withLock { self.wakeAll(&$0) }
                    for waiter in woken { waiter.resume(returning: true) }
                } catch {
                    self.reconnect(after: min(delay * 2, 30))
                }
            }
        }

        func wait(timeout: TimeInterval) async -> Bool {
            let id = UUID()
            return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { state -> Bool? in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if state.closed { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
                    let waiter = self?.state.withLock { $0.waiters.removeValue(forKey: id) }
                    waiter?.resume(returning: false)
                }
            }
        }

        func close() {
            let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                state.closed = true
                state.source?.cancel()
                state.source = nil
                state.connection = nil
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in woken { waiter.resume(returning: false) }
        }
    }
}
