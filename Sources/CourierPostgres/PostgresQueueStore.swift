import Courier
import CourierSupport
import Foundation

/// A ``DownloadQueueStore`` in a PostgreSQL database, shared by a fleet of workers: each item is
/// leased by one live worker at a time, taken over when its lease expires, and completed only
/// under its current fencing token. Docs/DownloadQueue.md ("A fleet") explains the guarantees.
///
/// libpq is bound at run time (`dlopen("libpq.so.5")`): the package builds without it, and a
/// machine without it gets ``CourierError/Code-swift.struct/storeUnavailable`` naming Debian's
/// `libpq5`. The connection string is libpq's (`postgres://user@host/db` or `host=… dbname=…`);
/// a password may be in it, or in `PGPASSWORD` or a password/service file, which libpq reads
/// itself. No error or description ever shows it.
///
/// - Leasing is one transaction, one round trip (the `courier_lease` function): the best runnable
///   row (`ORDER BY priority DESC, sequence`) is taken with `SELECT … FOR UPDATE SKIP LOCKED`, so
///   concurrent workers skip each other's rows instead of waiting; the connections of the host's
///   unexpired leases are summed under a transaction-scoped advisory lock of that host, so the
///   per-host cap holds across the fleet, and the lease holds its item's split capped at what is
///   free (``DownloadQueue/Lease/connections``).
/// - Each lease raises the row's `token`. Renew, progress, complete, fail and release change the
///   row only `WHERE token = <the lease's> AND worker = … AND lease_expires >= now()`, in the
///   statement that makes the change: a worker whose lease was taken over changes nothing and
///   gets ``CourierError/Code-swift.struct/leaseLost``.
/// - Expiry is the server's clock (`now()`), never the worker's.
/// - Adding, completing, failing and releasing send `NOTIFY courier_queue` in their transaction;
///   ``waitForWork(timeout:)`` waits for it on a second connection's socket with a
///   `DispatchSource` (no polling, no CPU while idle).
public final class PostgresQueueStore: DownloadQueueStore, CustomStringConvertible {
    /// The statements' connection.
    let connection: PostgresConnection
    /// The `LISTEN` connection and its waiters (PostgresQueueStore+Notifications.swift).
    let listener: Listener

    /// Connects to the database, creates the schema when it has none (or checks its version), and
    /// starts listening for work.
    ///
    /// - Parameters:
    ///   - connectionString: libpq's connection string (URI or keyword/value pairs).
    ///   - library: the libpq to load; the default is the system's `libpq.so.5`.
    /// - Throws: ``CourierError/Code-swift.struct/storeUnavailable`` when libpq is missing (naming
    ///   the package), the server cannot be reached or refuses the credentials;
    ///   ``CourierError/Code-swift.struct/storeIncompatible`` for a schema of a newer version or a
    ///   damaged one. The messages never hold the password.
    public init(connectionString: String, library: String = "libpq.so.5") throws(CourierError) {
        let libpq = try LibPQ.load(library)
        connection = try PostgresConnection(connectionString, libpq: libpq)
        try Self.prepareSchema(on: connection)
        listener = try Listener(connectionString, libpq: libpq)
    }

    /// The connection string with its password masked.
    public var description: String { "PostgresQueueStore(\(connection.redactedConnectionString))" }

    deinit {
        close()
    }

    /// Closes both connections; later calls throw ``CourierError/Code-swift.struct/storeUnavailable``
    /// and waiters return.
    public func close() {
        listener.close()
        connection.close()
    }

    /// Runs `sql`, turning a failure into its ``CourierError``.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws(CourierError) -> PostgresConnection.Rows {
        do throws(PostgresConnection.Failure) {
            return try connection.execute(sql, parameters)
        } catch {
            throw error.error
        }
    }

    /// Runs `body` between `BEGIN` and `COMMIT`; rolls back when it throws.
    func transaction<Value>(
        _ body: (PostgresConnection.Session) throws(PostgresConnection.Failure) -> Value
    )
        throws(PostgresConnection.Failure) -> Value
    {
        try connection.session { (session: PostgresConnection.Session) throws(PostgresConnection.Failure) -> Value in
            _ = try session.execute("BEGIN")
            do throws(PostgresConnection.Failure) {
                let value = try body(session)
                _ = try session.execute("COMMIT")
                return value
            } catch {
                _ = try? session.execute("ROLLBACK")
                throw error
            }
        }
    }

    // MARK: - Adding

    /// Adds `items` in one transaction, all or none, and wakes idle workers.
    @discardableResult
    public func add(_ items: [DownloadQueue.NewItem]) throws(CourierError) -> [DownloadQueue.Item] {
        guard !items.isEmpty else { return [] }
        let ids = items.map { $0.id ?? UUID().uuidString.lowercased() }
        do throws(PostgresConnection.Failure) {
            return try transaction { (session: PostgresConnection.Session) throws(PostgresConnection.Failure) -> [DownloadQueue.Item] in
                let numbers = try session.execute(
                    "SELECT nextval('courier_item_sequence') FROM generate_series(1, $1::int)", [String(items.count)])
                var stored: [DownloadQueue.Item] = []
                for (index, (new, id)) in zip(items, ids).enumerated() {
                    let sequence = UInt64(numbers[index][0] ?? "") ?? 0
                    do throws(CourierError) {
                        stored.append(try DownloadQueue.Item.stored(new, id: id, sequence: sequence))
                    } catch {
                        throw PostgresConnection.Failure(sqlState: nil, error: error)
                    }
                }
                // Rows in batches of 500 (seven parameters each, well under the protocol's 65,535).
                // `split_connections` is the most the item's split asks for (the queue's rule).
                for start in stride(from: 0, to: stored.count, by: 500) {
                    let batch = stored[start..<min(start + 500, stored.count)]
                    var values: [String] = []
                    var parameters: [String?] = []
                    for item in batch {
                        let base = parameters.count
                        values.append(
                            "($\(base + 1), $\(base + 2)::bigint, $\(base + 3)::int, $\(base + 4), $\(base + 5), $\(base + 6)::int)")
                        parameters += [
                            item.id, String(item.sequence), String(item.priority), item.storeHostKey, Self.json(item),
                            String(DownloadQueue.connectionsWanted(by: item.split)),
                        ]
                    }
                    _ = try session.execute(
                        "INSERT INTO courier_items (id, sequence, priority, host, item, split_connections) VALUES \(values.joined(separator: ", "))",
                        parameters)
                }
                _ = try session.execute("SELECT pg_notify('courier_queue', 'add')")
                return stored
            }
        } catch {
            if error.sqlState == "23505" {
                throw CourierError(
                    code: .invalidRequest, message: "the queue already has an item with one of these ids (nothing was added)")
            }
            throw error.error
        }
    }

    /// The item as the journal encodes it.
    static func json(_ item: DownloadQueue.Item) -> String {
        // Encoding these plain values cannot fail.
        String(decoding: (try? JSONEncoder().encode(item.with(state: .queued))) ?? Data(), as: UTF8.self)
    }

    // MARK: - Leasing

    /// Leases the best runnable item whose host has a connection free, or `nil`: one call of
    /// `courier_lease` (PostgresQueueStore+Schema.swift), one round trip. The lease holds the
    /// connections the function granted (its item's split, capped at what the host had free).
    public func lease(worker: String, duration: TimeInterval, maximumPerHost: Int) throws(CourierError) -> DownloadQueue.Lease? {
        // A row edited into something unreadable is failed, and the next one leased instead.
        for _ in 0..<8 {
            let rows = try execute(
                "SELECT id, token, expires, item, received, resume_record, connections FROM courier_lease($1, $2::float8, $3::int)",
                [worker, String(duration), String(max(1, maximumPerHost))])
            guard let values = rows.first, let id = values[0] else { return nil }
            switch makeLease(id: id, worker: worker, Array(values.dropFirst())) {
            case .leased(let lease): return lease
            case .unreadable(let lease, let why):
                try fail(lease, DownloadQueue.Failure(CourierError(code: .storeIncompatible, message: why)))
            }
        }
        return nil
    }

    /// A leased row, read.
    enum LeaseRow {
        case leased(DownloadQueue.Lease)
        /// Leased, but its item JSON does not decode: failed by the caller with `why`.
        case unreadable(DownloadQueue.Lease, why: String)
    }

    /// `values`: token, expiry (epoch seconds), item JSON, received, resume record (hex), connections.
    private func makeLease(id: String, worker: String, _ values: [String?]) -> LeaseRow {
        let token = Int64(values[0] ?? "") ?? 0
        let expires = Date(timeIntervalSince1970: Double(values[1] ?? "") ?? 0)
        let received = Int64(values[3] ?? "") ?? 0
        let resumeRecord = values[4].flatMap(Self.bytes(hex:))
        let connections = Int(values[5] ?? "") ?? 1
        guard let json = values[2], let item = try? JSONDecoder().decode(DownloadQueue.Item.self, from: Data(json.utf8)), item.id == id
        else {
            let placeholder = DownloadQueue.Item.placeholder(id: id)
            return .unreadable(
                DownloadQueue.Lease(item: placeholder, worker: worker, token: token, expires: expires),
                why:
                    "the row of item \(id) in courier_items holds an item this version cannot read (edited by hand?); it was failed, not fetched"
            )
        }
        let lease = DownloadQueue.Lease(
            item: item.with(state: .running(received: received, total: item.expectedLength)), worker: worker, token: token,
            expires: expires, received: received, resumeRecord: resumeRecord, connections: connections)
        return .leased(lease)
    }

    // MARK: - Under a lease

    /// The condition every change under a lease carries: the lease is the row's current one.
    private static let fenced = "id = $1 AND token = $2::bigint AND worker = $3 AND state = 'leased' AND lease_expires >= now()"

    /// Runs `change` (an `UPDATE … WHERE <fenced> RETURNING …`); throws ``CourierError/Code-swift.struct/leaseLost``
    /// when no row matched.
    @discardableResult
    private func fencedUpdate(
        _ lease: DownloadQueue.Lease, set: String, _ extra: [String?] = [], returning: String = "id", notify: Bool
    )
        throws(CourierError) -> [String?]
    {
        let update = "UPDATE courier_items SET \(set), updated = now() WHERE \(Self.fenced) RETURNING \(returning)"
        let sql = notify ? "WITH done AS (\(update)) SELECT done.*, pg_notify('courier_queue', 'free') FROM done" : update
        let rows = try execute(sql, [lease.item.id, String(lease.token), lease.worker] + extra)
        guard let row = rows.first else {
            throw CourierError(
                code: .leaseLost,
                message:
                    "lease \(lease.token) of item \(lease.item.id) is no longer \(lease.worker)'s: it expired or another worker took the item over"
            )
        }
        return row
    }

    /// Extends the lease by `duration` seconds from the server's now.
    public func renew(_ lease: DownloadQueue.Lease, duration: TimeInterval) throws(CourierError) -> DownloadQueue.Lease {
        let row = try fencedUpdate(
            lease, set: "lease_expires = now() + make_interval(secs => $4::float8)", [String(duration)],
            returning: "extract(epoch FROM lease_expires)::float8", notify: false)
        return lease.renewed(until: Date(timeIntervalSince1970: Double(row[0] ?? "") ?? 0))
    }

    /// Records the bytes received and the partial file's resume record.
    public func recordProgress(_ lease: DownloadQueue.Lease, received: Int64, resumeRecord: Data?) throws(CourierError) {
        try fencedUpdate(
            lease, set: "received = $4::bigint, resume_record = decode($5, 'hex')",
            [String(max(0, received)), resumeRecord.map(Self.hex)], notify: false)
    }

    /// Marks the item completed at `file`, in the statement that checks the fencing token.
    public func complete(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError) {
        try fencedUpdate(lease, set: "state = 'completed', file = $4, lease_expires = NULL", [file.standardizedFileURL.path], notify: true)
    }

    /// Sets the row's `file` under the fence while it stays `leased`: a leased row with a `file` is
    /// one whose file was being published (schema version 1 already has the column).
    public func beginPublishing(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError) {
        try fencedUpdate(lease, set: "file = $4", [file.standardizedFileURL.path], notify: false)
    }

    /// The `file` of the item's row while it is leased: what an earlier lease began publishing.
    public func publishingFile(of lease: DownloadQueue.Lease) throws(CourierError) -> URL? {
        let rows = try execute("SELECT file FROM courier_items WHERE id = $1 AND state = 'leased'", [lease.item.id])
        return (rows.first?.first ?? nil).map { URL(fileURLWithPath: $0) }
    }

    /// Marks the item failed with `failure`.
    public func fail(_ lease: DownloadQueue.Lease, _ failure: DownloadQueue.Failure) throws(CourierError) {
        let json = String(decoding: (try? JSONEncoder().encode(failure)) ?? Data(), as: UTF8.self)
        try fencedUpdate(lease, set: "state = 'failed', failure = $4, lease_expires = NULL", [json], notify: true)
    }

    /// Gives the item back, queued, keeping its recorded progress.
    public func release(_ lease: DownloadQueue.Lease) throws(CourierError) {
        try fencedUpdate(lease, set: "state = 'queued', worker = NULL, lease_expires = NULL, file = NULL", notify: true)
    }

    // MARK: - Reading

    /// Every item in the order added. A row whose item does not decode is left out.
    public func items() throws(CourierError) -> [DownloadQueue.Item] {
        let rows = try execute("SELECT item, state, received, failure, file FROM courier_items ORDER BY sequence")
        return rows.compactMap { row in
            guard let json = row[0], let item = try? JSONDecoder().decode(DownloadQueue.Item.self, from: Data(json.utf8)) else {
                return nil
            }
            return item.with(state: Self.state(row[1], received: Int64(row[2] ?? "") ?? 0, failure: row[3], file: row[4], item: item))
        }
    }

    /// How many items are in each state, and which worker holds the leased ones: one row per
    /// state and worker (`worker` `nil` for rows no worker holds), by state then worker.
    public func status() throws(CourierError) -> [(state: String, worker: String?, count: Int)] {
        let rows = try execute(
            "SELECT state, CASE WHEN state = 'leased' THEN worker END AS w, count(*) FROM courier_items GROUP BY 1, 2 ORDER BY 1, 2")
        return rows.map { row in (state: row[0] ?? "", worker: row[1], count: Int(row[2] ?? "") ?? 0) }
    }

    /// ``status()``'s rows as a person reads them: a `STATE  WORKER  ITEMS` table (`-` for no
    /// worker), then `total N`, each line ending in a newline (`courier queue status` prints it). Pure.
    public static func statusTable(_ rows: [(state: String, worker: String?, count: Int)]) -> String {
        var lines = ["STATE      WORKER                          ITEMS"]
        for row in rows {
            lines.append(
                row.state.padding(toLength: 10, withPad: " ", startingAt: 0) + " "
                    + (row.worker ?? "-").padding(toLength: 31, withPad: " ", startingAt: 0) + " " + String(row.count))
        }
        lines.append("total " + String(rows.reduce(0) { $0 + $1.count }))
        return lines.joined(separator: "\n") + "\n"
    }

    static func state(_ name: String?, received: Int64, failure: String?, file: String?, item: DownloadQueue.Item) -> DownloadQueue.State {
        switch name {
        case "leased": return .running(received: received, total: item.expectedLength)
        case "completed": return .completed(URL(fileURLWithPath: file ?? item.destination.path))
        case "failed":
            let decoded = failure.flatMap { try? JSONDecoder().decode(DownloadQueue.Failure.self, from: Data($0.utf8)) }
            return .failed(
                decoded ?? DownloadQueue.Failure(CourierError(code: .storeIncompatible, message: "failed (no readable reason stored)")))
        case "paused": return .paused
        case "cancelled": return .cancelled
        default: return .queued
        }
    }

    // MARK: - Bytes as text

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(data.count * 2)
        for byte in data {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func bytes(hex: String) -> Data? {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        func value(_ character: UInt8) -> UInt8? {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var data = Data(capacity: characters.count / 2)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = value(characters[index]), let low = value(characters[index + 1]) else { return nil }
            data.append(high << 4 | low)
        }
        return data
    }
}
