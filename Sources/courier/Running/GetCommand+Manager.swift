import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// What the two ways of running `get` (a file download, with or without `--cache`; streamed to stdout) share:
/// the manager's configuration from the options, and the one error line that ends a failed run.
extension GetCommand {
    /// A configuration from `options`: TLS, `--timeout` as URLSession's request timeout (not a
    /// stream's: its ``StreamPolicy`` has it), the retry lines (through `retryLine`, unless quiet),
    /// `--wait-for-network`, and `-v`'s monitor (`verbose`); every line goes to `say`.
    static func managerConfiguration(
        _ options: Options, verbose: VerboseMonitor? = nil, say: @escaping @Sendable (String) -> Void,
        retryLine: @escaping @Sendable (TaskRetryEvent) -> String? = { GetCommand.retryLine($0) }
    ) -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.tls = options.tls.announced()
        if let timeout = options.timeout, !options.streamsToStandardOutput {
            configuration.urlSessionConfiguration.timeoutIntervalForRequest = timeout
        }
        if !options.quiet {
            // Each retry on a line of its own: what failed, where, when the next attempt starts.
            configuration.eventMonitors = [ClosureEventMonitor(onRetry: { _, event in if let line = retryLine(event) { say(line) } })]
        }
        applyNetworkWait(options, to: &configuration, say: say)
        if let verbose { configuration.eventMonitors.append(verbose) }
        return configuration
    }

    /// A file download's retries: only the attempts of the download, not its split connections'
    /// ranges handed to another connection (the progress line shows the connections).
    static func downloadRetryLine(_ event: TaskRetryEvent) -> String? {
        event.owner == .splitConnection ? nil : retryLine(event)
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
        return CourierCommand.fail(line, status)
    }
}

extension GetCommand.Options {
    /// The policy every file download of the command starts from, one URL or `-i`'s items.
    var downloadPolicy: DownloadPolicy {
        var policy = DownloadPolicy()
        policy.retry = GetCommand.retryPolicy(retries: retries)
        policy.publishesUnverifiedBodies = acceptUnverified
        policy.deadline = maxTime.map { .seconds(roundingUp: $0) }
        // Every run gives its -H headers again: a record never needs their values, and a token
        // must not sit in the working directory. Nor do they follow a redirect to another origin
        // unless the user trusts it (curl's --location-trusted).
        policy.recordsHeaders = false
        if !locationTrusted { policy.sensitiveHeaders = Set(headers.map { $0.name.lowercased() }) }
        return policy
    }
}
