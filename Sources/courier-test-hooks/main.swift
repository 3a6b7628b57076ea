import Foundation

// `courier-test-hooks`: test-only commands that the crash tests run as child processes. It is not
// a product, so `swift build -c release --product courier` never builds it, and the shipped
// `courier` carries no hidden command (Docs/PublicAPI.md, "Test hooks").

/// A mistake in the command line: printed with the usage, exit 2.
struct UsageError: Error {
    let message: String
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "journal-append":
        exit(try JournalAppendCommand(Array(arguments.dropFirst())).run())
    case "cache-store":
        exit(try CacheStoreCommand.run(Array(arguments.dropFirst())))
    case "network-monitor":
        exit(NetworkCommands.monitor(Array(arguments.dropFirst())))
    case "network-fetch" where arguments.count == 3:
        exit(try NetworkCommands.fetch(wait: Double(arguments[1]), path: arguments[2]))
    case "network-events" where arguments.count == 2:
        exit(try NetworkCommands.events(wait: Double(arguments[1])))
    case "network-ws" where arguments.count == 2:
        exit(try NetworkCommands.webSocket(wait: Double(arguments[1])))
    case "network-queue" where arguments.count == 3 || arguments.count == 4:
        exit(try NetworkCommands.queue(directory: arguments[1], bytes: Int(arguments[2]) ?? 1024, slow: arguments.count == 4))
    case "fleet-worker":
        exit(try FleetWorkerCommand.run(Array(arguments.dropFirst())))
    default:
        throw UsageError(
            message:
                "usage: courier-test-hooks journal-append … | cache-store DIR COUNT | network-monitor [HOST…] | network-fetch WAIT PATH | network-events WAIT | network-ws WAIT | network-queue DIR BYTES [slow] | fleet-worker CONNECTION DIR NAME LEASE [PER-HOST]"
        )
    }
} catch let error as UsageError {
    FileHandle.standardError.write(Data("courier-test-hooks: \(error.message)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("courier-test-hooks: \(error)\n".utf8))
    exit(1)
}
