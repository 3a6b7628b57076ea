import Foundation

// `courier`: a thin command-line front end over Courier and CourierTestServer.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    status = try CourierCommand.run(arguments)
} catch let error as UsageError {
    FileHandle.standardError.write(Data("courier: \(error.message)\nRun '\(error.help)' for usage.\n".utf8))
    status = ExitCode.usage
} catch {
    FileHandle.standardError.write(Data("courier: \(error)\n".utf8))
    status = ExitCode.failure
}
exit(status)
