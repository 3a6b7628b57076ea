import Courier
import CourierSupport
import Foundation

extension PostgresQueueStore {
    /// Waits until work may be there — an item added, or one completed, failed or released (which
    /// frees a slot on its host) by any worker of the database — or until `timeout` seconds pass.
    /// Returns `true` for a notification (also one that arrived since the previous call
    /// returned), `false` for the timeout or a closed store. When the `LISTEN` connection has
    /// broken (the server restarted), no notification comes and every wait runs to its timeout.
    /// Nothing polls: the `LISTEN` connection's socket is watched by a `DispatchSource`.
    ///
    /// A worker's loop: lease until ``lease(worker:duration:maximumPerHost:)`` returns `nil`, then
    /// wait here (with a timeout as long as a lease, so that expired leases are taken over even
    /// when no notification comes: an expiry sends none).
    public func waitForWork(timeout: TimeInterval) async -> Bool {
        await listener.wait(timeout: timeout)
    }

    /// The `LISTEN courier_queue` connection and the tasks waiting for its notifications.
    final class Listener: Sendable {
        struct State {
            var waiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
            /// A notification arrived while nobody waited: the next wait returns at once.
            var pending = false
            var closed = false
            /// The connection broke (the server restarted): no notification will come, so waits
            /// run to their timeouts (a worker's loop never spins on an answer given at once).
            var broken = false
            /// The socket's watcher (in the state: a dispatch source is not `Sendable`).
            var source: (any DispatchSourceRead)?
        }

        let connection: PostgresConnection
        let state = Locked(State())

        init(_ connectionString: String, libpq: LibPQ) throws(CourierError) {
            let connection = try PostgresConnection(connectionString, libpq: libpq)
            do throws(PostgresConnection.Failure) {
                _ = try connection.execute("LISTEN courier_queue")
            } catch {
                throw error.error
            }
            self.connection = connection
            let source = DispatchSource.makeReadSource(
                fileDescriptor: connection.socket(), queue: DispatchQueue(label: "courier.postgres.listen"))
            // libpq owns the socket: it is closed by PQfinish, once the source can no longer read it.
            source.setCancelHandler { connection.close() }
            source.setEventHandler { [weak self] in self?.readable() }
            state.withLock { $0.source = source }
            source.resume()
        }

        /// The socket has data: drain the notifications and wake every waiter.
        private func readable() {
            let (count, alive) = connection.drainNotifications()
            // A closed or broken connection reads as always readable: stop watching it, and let the
            // waiters go (their next statement reports the failure or reconnects).
            guard count > 0 || !alive else { return }
            let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                let woken = Array(state.waiters.values)
                state.waiters = [:]
                if woken.isEmpty { state.pending = true }
                if !alive {
                    state.broken = true
                    state.source?.cancel()
                    state.source = nil
                }
                return woken
            }
            for waiter in woken { waiter.resume(returning: true) }
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
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in woken { waiter.resume(returning: false) }
        }
    }
}
