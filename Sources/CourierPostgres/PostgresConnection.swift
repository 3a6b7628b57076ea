import Courier
import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One libpq connection, used by one caller at a time: libpq's connection object is not
/// thread-safe, so every use runs under the one lock, network round trip included (the lock
/// orders the statements of one connection; it guards no state a caller waits on otherwise).
final class PostgresConnection: Sendable {
    /// The connection's mutable part: the `PGconn *`, `nil` once closed.
    struct Handle {
        var connection: OpaquePointer?
    }

    /// Rows of a result, each value in libpq's text format (`nil` for SQL NULL).
    typealias Rows = [[String?]]

    let libpq: LibPQ
    /// The connection string as given: only ever passed to libpq, never shown.
    private let connectionString: String
    /// What errors may say about the connection string.
    let redactedConnectionString: String
    /// The passwords of the connection string, removed from every message.
    let secrets: [String]
    let handle: Locked<Handle>

    /// Connects, or throws ``CourierError/Code-swift.struct/storeUnavailable`` with libpq's reason
    /// (a refused password says so), the connection string redacted.
    init(_ connectionString: String, libpq: LibPQ) throws(CourierError) {
        self.libpq = libpq
        self.connectionString = connectionString
        self.redactedConnectionString = PostgresConnectionString.redacted(connectionString)
        self.secrets = PostgresConnectionString.secrets(in: connectionString)
        let connection = connectionString.withCString { libpq.connectdb($0) }
        guard let connection else {
            throw CourierError(code: .storeUnavailable, message: "libpq could not allocate a connection (out of memory)")
        }
        guard libpq.status(connection) == LibPQ.connectionOK else {
            let reason = Self.text(libpq.errorMessage(connection))
            libpq.finish(connection)
            throw CourierError(
                code: .storeUnavailable,
                message: PostgresConnectionString.scrub(
                    "cannot connect to PostgreSQL (\(redactedConnectionString)): \(reason)", secrets: secrets))
        }
        self.handle = Locked(Handle(connection: connection))
    }

    deinit {
        close()
    }

    /// Closes the connection; later statements throw.
    func close() {
        let connection = handle.withLock { handle -> OpaquePointer? in
            defer { handle.connection = nil }
            return handle.connection
        }
        if let connection { libpq.finish(connection) }
    }

    /// A statement's failure: its SQLSTATE (`23505` a unique violation…), and the error.
    struct Failure: Error {
        let sqlState: String?
        let error: CourierError
    }

    /// Runs `sql` with `parameters` ($1, $2… in text format) and returns its rows.
    func execute(_ sql: String, _ parameters: [String?] = []) throws(Failure) -> Rows {
        try session { (session: Session) throws(Failure) -> Rows in try session.execute(sql, parameters) }
    }

    /// The connection held for a run of statements (a transaction): no other caller's statement
    /// runs between them.
    struct Session {
        let owner: PostgresConnection
        let connection: OpaquePointer

        /// Runs one statement of the session.
        func execute(_ sql: String, _ parameters: [String?] = []) throws(Failure) -> Rows {
            try owner.run(sql, parameters, on: connection).get()
        }
    }

    /// Runs `body` with the connection to itself. A connection found broken (the server
    /// restarted) is reset once first.
    func session<Value>(_ body: (Session) throws(Failure) -> Value) throws(Failure) -> Value {
        let outcome = handle.withLock { handle -> Result<Value, Failure> in
            guard let connection = handle.connection else {
                return .failure(
                    Failure(sqlState: nil, error: CourierError(code: .storeUnavailable, message: "the PostgreSQL store is closed")))
            }
            if libpq.status(connection) != LibPQ.connectionOK { libpq.reset(connection) }
            do throws(Failure) {
                return .success(try body(Session(owner: self, connection: connection)))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// One `PQexecParams` round trip.
    fileprivate func run(_ sql: String, _ parameters: [String?], on connection: OpaquePointer) -> Result<Rows, Failure> {
        // strdup'ed C strings: their addresses must outlive the call, which one withCString per
        // parameter cannot express for a variable count.
        let values = parameters.map { $0.flatMap { strdup($0) } }
        defer { for value in values { free(value) } }
        let result = values.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { pointers in
            libpq.execParams(connection, sql, Int32(parameters.count), nil, pointers.baseAddress, nil, nil, 0)
        }
        defer { libpq.clear(result) }
        let status = result.map { libpq.resultStatus($0) } ?? -1
        guard status == LibPQ.commandOK || status == LibPQ.tuplesOK, let result else {
            let reason = result.map { Self.text(libpq.resultErrorMessage($0)) } ?? Self.text(libpq.errorMessage(connection))
            let sqlState = result.flatMap { libpq.resultErrorField($0, LibPQ.sqlStateField) }.map { String(cString: $0) }
            let broken = libpq.status(connection) != LibPQ.connectionOK
            let message =
                broken
                ? "the connection to PostgreSQL (\(redactedConnectionString)) failed: \(reason)"
                : "PostgreSQL refused a statement: \(reason)"
            return .failure(
                Failure(
                    sqlState: sqlState,
                    error: CourierError(code: .storeUnavailable, message: PostgresConnectionString.scrub(message, secrets: secrets))))
        }
        var rows: Rows = []
        let count = libpq.ntuples(result)
        guard count > 0 else { return .success(rows) }
        let columns = libpq.nfields(result)
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            var values: [String?] = []
            for column in 0..<columns {
                values.append(libpq.getisnull(result, row, column) != 0 ? nil : Self.text(libpq.getvalue(result, row, column)))
            }
            rows.append(values)
        }
        return .success(rows)
    }

    /// The connection's socket, for a `DispatchSource` to wait on; -1 when closed.
    func socket() -> Int32 {
        handle.withLock { handle in handle.connection.map { libpq.socket($0) } ?? -1 }
    }

    /// Reads what arrived on the socket and frees every notification it held; returns how many
    /// there were, and whether the connection is still usable.
    ///
    /// It reads until the socket has nothing more: a dispatch source may report bytes and the
    /// peer's close as one event (the server's "terminating connection" message, then the end),
    /// and one `PQconsumeInput` reads only the bytes, so the end is looked for with a
    /// `MSG_PEEK` read, which consumes nothing.
    func drainNotifications() -> (count: Int, alive: Bool) {
        handle.withLock { handle in
            guard let connection = handle.connection else { return (0, false) }
            var count = 0
            while true {
                guard libpq.consumeInput(connection) == 1 else { return (count, false) }
                while let notification = libpq.notifies(connection) {
                    libpq.freemem(notification)
                    count += 1
                }
                guard libpq.status(connection) == LibPQ.connectionOK else { return (count, false) }
                var byte: UInt8 = 0
                let peeked = recv(libpq.socket(connection), &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if peeked == 0 { return (count, false) }  // the server closed the connection
                if peeked < 0 { return (count, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) }
                // More bytes already there: read them too.
            }
        }
    }

    /// The text of a C string libpq owns, trimmed of its final newline.
    static func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
