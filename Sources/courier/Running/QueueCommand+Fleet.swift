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
        var entries: [DownloadList.Entry] = []
        reading: while true {
            if let signal = stops.signal { return ExitCode.forSignal(signal) }
            do {
                let batch = try feeder.read(upTo: Int.max)
                entries += batch.entries
                if batch.inputEnded { break reading }
            } catch {
                if case .mistake(let error) = ending(error) {
                    ProgressPrinter.writeToStandardError("courier: \(error.message)\nRun '\(error.help)' for usage.\n")
                    return ExitCode.usage
                }
                return CourierCommand.fail("cannot read \(Self.source(options))", ExitCode.fileSystem)
            }
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
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = options.parallel
        configuration.maximumRunningPerHost = options.perHost
        configuration.policy = options.shared.downloadPolicy
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
        let ids = Set(entries.map(\.id))
        var finished: [String: DownloadQueue.State] = [:]
        while true {
            if let signal = stops.signal {
                CourierCommand.blocking { await queue.stop() }
                if !quiet { ProgressPrinter.writeToStandardError("courier: interrupted; its items went back to the list\n") }
                return ExitCode.forSignal(signal)
            }
            // The database decides: other workers finish items too. A read that fails (the server
            // restarting) is tried again.
            if let items = try? store.items() {
                finished = [:]
                for item in items where ids.contains(item.id) && item.state.isFinished { finished[item.id] = item.state }
                if finished.count == ids.count { break }
            }
            usleep(250_000)
        }
        CourierCommand.blocking { await queue.stop() }
        return summarize(entries, finished)
    }

    /// The saved paths on stdout, in the input's order; the failures on stderr; the exit code.
    private func summarize(_ entries: [DownloadList.Entry], _ finished: [String: DownloadQueue.State]) -> Int32 {
        var paths = ""
        var lines: [String] = []
        var worst = ExitCode.success
        for entry in entries {
            switch finished[entry.id] {
            case .completed(let file): paths += file.path + "\n"
            case .failed(let failure):
                lines.append("courier:   line \(entry.line): \(entry.name): \(GetCommand.oneLine(Self.describe(failure)))")
                worst = Self.worse(worst, ExitCode.forCode(failure.code))
            default:
                lines.append("courier:   line \(entry.line): \(entry.name): paused or cancelled in the database")
                worst = Self.worse(worst, ExitCode.failure)
            }
        }
        FileHandle.standardOutput.write(Data(paths.utf8))
        return reportEnd(count: entries.count, failures: lines, worst: worst)
    }
}
