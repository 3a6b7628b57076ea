import Courier
import CourierPostgres
import Foundation

/// `fleet-worker CONNECTION DIR NAME LEASE [PER-HOST]`: one worker of a fleet, for the PostgreSQL tests
/// (Tests/CourierPostgresTests/FleetWorkerProcessTests.swift). It leases from the store at
/// CONNECTION (a password comes from `PGPASSWORD`), fetches into DIR, and prints one unbuffered
/// line per item it ends: `completed <id>`, `failed <id> <code>` (`leaseLost` included), `queued <id>`.
/// It prints `ready` once the store is open, and ends when its standard input closes.
enum FleetWorkerCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.count == 4 || arguments.count == 5, let lease = Double(arguments[3]) else {
            throw UsageError(message: "usage: courier-test-hooks fleet-worker CONNECTION DIR NAME LEASE-SECONDS [PER-HOST]")
        }
        let store = try PostgresQueueStore(connectionString: arguments[0])
        var configuration = DownloadQueueWorker.Configuration()
        configuration.name = arguments[2]
        configuration.leaseDuration = lease
        // Idle workers wait on LISTEN/NOTIFY; the safety poll (for expired leases) is a lease long.
        configuration.pollInterval = lease
        configuration.maximumRunning = 2
        if arguments.count == 5, let perHost = Int(arguments[4]) { configuration.maximumRunningPerHost = perHost }
        let worker = try DownloadQueueWorker(
            store: store, directory: URL(fileURLWithPath: arguments[1]), manager: SessionManager(), configuration: configuration)
        worker.addObserver { change in
            switch change.state {
            case .completed: NetworkCommands.say("completed \(change.id)")
            case .failed(let failure): NetworkCommands.say("failed \(change.id) \(failure.code)")
            case .queued: NetworkCommands.say("queued \(change.id)")
            default: break
            }
        }
        worker.start()
        NetworkCommands.say("ready")
        while FileHandle.standardInput.availableData.count > 0 {}
        return 0
    }
}
