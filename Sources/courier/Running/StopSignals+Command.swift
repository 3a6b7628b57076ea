import Foundation
import Courier

extension StopSignals {
    /// SIGINT and SIGTERM for a `courier` command, by the library's rule: under the get
    /// supervisor its copy of a signal is ignored; a second signal leaves at once. What is on disk
    /// stays resumable then (the record may lag by up to a second, which the library allows for).
    static func watching() -> (StopSignals, SignalWatcher) {
        watching(supervised: ProcessInfo.processInfo.environment[GetSupervisor.childVariable] != nil) { signal in
            ProgressPrinter.writeToStandardError("courier: interrupted again; stopping now\n")
            _exit(ExitCode.forSignal(signal))
        }
    }
}
