import Courier
import CourierPostgres
import Foundation

/// `courier queue status --queue postgres://…`: a fleet's list at a glance — how many items are
/// queued, leased (per worker), completed, failed, paused or cancelled — read from the database
/// the workers share (QueueCommand+Fleet.swift). The connection string is never printed.
enum QueueStatusCommand {
    /// `courier queue`'s help.
    static let help = """
        usage: courier queue status --queue <postgres://…>

        Show a fleet's download list (courier get -i FILE --queue …): its items by
        state, and the leased ones by worker. The connection string is libpq's; the
        password comes from PGPASSWORD, ~/.pgpass or a service file, and is never
        printed.
        """

    /// The connection string from `status --queue X` (or `--queue=X`); `nil` for `--help`.
    static func parse(_ arguments: [String]) throws(UsageError) -> String? {
        if arguments.contains("--help") || arguments.contains("-h") { return nil }
        guard arguments.first == "status" else {
            throw UsageError(message: "courier queue takes one command: status", help: "courier queue --help")
        }
        let scanned = try ArgumentScanner(command: "queue status", .queueStatus, help: "courier queue --help")
            .scan(Array(arguments.dropFirst()))
        guard scanned.positionals.isEmpty else {
            // Not quoted: it may be a connection string given without --queue.
            throw UsageError(message: "courier queue status takes only --queue <postgres://…>", help: "courier queue --help")
        }
        guard let connection = scanned.values.last?.value, !connection.isEmpty else {
            throw UsageError(message: "courier queue status needs --queue <postgres://…>", help: "courier queue --help")
        }
        return connection
    }

    /// Prints the table; returns the exit code.
    static func run(connection: String) -> Int32 {
        let table: String
        do {
            let store = try PostgresQueueStore(connectionString: connection)
            defer { store.close() }
            table = PostgresQueueStore.statusTable(try store.status())
        } catch {
            ProgressPrinter.writeToStandardError("courier: the download list's database: \(GetCommand.oneLine(error.message))\n")
            return ExitCode.forError(error)
        }
        print(table, terminator: "")
        return ExitCode.success
    }
}
