import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// What the three ways of running `get` (to a file, streamed to stdout, through `--cache`) share:
/// the manager's configuration from the options, and the one error line that ends a failed run.
extension GetCommand {
    /// A configuration from `options`: TLS, the retry lines (through `retryLine`, unless quiet),
    /// `--wait-for-network` and `-v`'s monitor (`verbose`).
    func managerConfiguration(
        printer: ProgressPrinter, verbose: VerboseMonitor?,
        retryLine: @escaping @Sendable (TaskRetryEvent) -> String? = { GetCommand.retryLine($0) }
    ) -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.tls = options.tls.announced()
        if !options.quiet {
            // Each retry on a line of its own: what failed, where, when the next attempt starts.
            configuration.eventMonitors = [
                ClosureEventMonitor(onRetry: { _, event in if let line = retryLine(event) { printer.message(line) } })
            ]
        }
        Self.applyNetworkWait(options, to: &configuration) { printer.message($0) }
        if let verbose { configuration.eventMonitors.append(verbose) }
        return configuration
    }

    /// Prints the one error line for `error` (`suffix` after a library error's) and returns its exit code.
    func fail(_ error: any Error, suffix: String = "") -> Int32 {
        let line: String
        let status: Int32
        switch error {
        case let failure as GetFailure: (line, status) = (failure.message, failure.status)
        case let error as CourierError:
            (line, status) = (
                Self.errorLine(error, requestURL: options.url, retryPolicy: Self.retryPolicy(retries: options.retries)) + suffix,
                ExitCode.forError(error)
            )
        default: (line, status) = ("\(error)" + suffix, ExitCode.failure)
        }
        ProgressPrinter.writeToStandardError("courier: \(Self.oneLine(line))\n")
        return status
    }
}
