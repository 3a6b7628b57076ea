import Foundation
import Courier

// `courier`: a thin command-line front end over Courier and CourierTestServer.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    status = try CourierCommand.run(arguments)
} catch let error as UsageError {
    // Through the redaction too: a usage error may quote a URL argument, credentials and all.
    ProgressPrinter.writeToStandardError("courier: \(error.message)\nRun '\(error.help)' for usage.\n")
    status = ExitCode.usage
} catch {
    ProgressPrinter.writeToStandardError("courier: \(error)\n")
    status = ExitCode.failure
}
exit(status)
