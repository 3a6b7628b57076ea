import Courier
import CourierPostgres
import CourierSupport
import Foundation

/// `courier get -i FILE --queue postgres://…`: this process as one worker of a fleet
/// (Docs/DownloadQueue.md, "A fleet"). The connection string is never printed.
extension QueueCommand {
    /// Runs this worker on the input `spool` keeps until every item of it is finished, or a stop signal.
    func runFleet(connection: String, spool: InputSpool) -> Int32 {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }
        // The whole input first: a fleet's list is a finished file, and a mistake in it adds nothing.
        var feeder = makeFeeder(spool, in: cwd)
        let entries: [DownloadList.Entry]
        do {
            guard let all = try feeder.readAll(until: { stops.signal != nil }) else { return ExitCode.forSignal(stops.signal ?? SIGTERM) }
            entries = all
        } catch {
            if case .mistake(let error) = ending(error) { return CourierCommand.usage(error) }
            return CourierCommand.fail("cannot read \(Self.source(options))", ExitCode.fileSystem)
        }
        let store: PostgresQueueStore
        do {
            store = try PostgresQueueStore(connectionString: connection)
            try store.addMissing(entries.map { $0.newItem(split: options.shared.split) })
        } catch {
            return CourierCommand.fail("the download list's database: \(error.message)", ExitCode.forError(error))
        }
        defer { store.close() }

        // Items are fetched split over their leases' connections: the manager holds none of them back.
        let manager = makeManager(split: options.shared.split) { ProgressPrinter.writeToStandardError($0 + "\n") }
        defer { manager.invalidate(cancelingTasks: true) }
        let configuration = queueConfiguration()
        // The queue on the shared store (its engine is the library's DownloadQueueWorker). It
        // starts leasing at once: an item ended before the observer below is added (a download
        // takes longer than that) would only miss its `done` line; the summary reads the database.
        let quiet = options.shared.quiet
        let names = Dictionary(entries.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let queue: DownloadQueue
        do {
            queue = try DownloadQueue(
                store: store, directory: options.stateDirectory(in: cwd).appendingPathComponent("fleet", isDirectory: true),
                manager: manager, configuration: configuration)
        } catch {
            return CourierCommand.fail(error.message, ExitCode.forError(error))
        }
        queue.addObserver { change in
            guard !quiet, let name = names[change.id] else { return }
            switch change.state {
            case .completed: ProgressPrinter.writeToStandardError("courier: \(name): done\n")
            case .failed(let failure):
                ProgressPrinter.writeToStandardError("courier: \(name): \(GetCommand.oneLine(Self.describe(failure)))\n")
            default: break
            }
        }
        // The database decides: other workers finish items too.
        let finished = store.waitUntilFinished(Set(entries.map(\.id)), until: { stops.signal != nil })
        CourierCommand.blocking { await queue.stop() }
        guard let finished else {
            if !quiet { ProgressPrinter.writeToStandardError("courier: interrupted; its items went back to the list\n") }
            return ExitCode.forSignal(stops.signal ?? SIGTERM)
        }
        return summarize(
            { body in entries.forEach(body) }, state: { finished[$0.id] }, gone: "paused or cancelled in the database", withURL: false)
    }
}
