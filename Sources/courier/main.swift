import Foundation
import Courier

// `courier`: a thin command-line front end over Courier and CourierTestServer.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    status = try CourierCommand.run(arguments)
} catch let error as UsageError {
    status = CourierCommand.usage(error)
} catch {
    ProgressPrinter.writeToStandardError("courier: \(error)\n")
    status = ExitCode.failure
}
exit(status)
