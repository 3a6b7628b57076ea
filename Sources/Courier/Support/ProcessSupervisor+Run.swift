import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ProcessSupervisor {
    /// How ``run(arguments:environment:input:killingAt:restart:)`` ended.
    public enum Outcome: Sendable {
        /// A child exited with this status: the program's own end.
        case exited(Int32)
        /// A stop signal (SIGINT, SIGTERM) came while no child ran: before the first, or between a
        /// crash and the restart.
        case stopped(Int32)
        /// A child outlived the hard limit and was killed (SIGKILL).
        case overdue
        /// No child could be started.
        case cannotStart(CourierError)
        /// `signal` ended a child for good: a trap that `restart` declined (`stop` `nil`), a trap
        /// while the child was stopping for `stop`, or any other signal (`stop`: the stop signal
        /// passed on to it, if one came).
        case signaled(Int32, stop: Int32?)
    }

    /// Runs this program in a child (``spawn(arguments:environment:input:)``) until one ends it for
    /// good, and returns how: a child a trap ended (``trapSignals``) is started again, with the
    /// same `arguments`, `environment` and `input`, when `restart` says so (told the signal and
    /// how many crashes there have been, so it can bound them and say why); a stop signal that
    /// comes meanwhile is passed on to the child (``wait(for:killingAt:)``) and ends the run
    /// instead. `hardLimit` (``monotonicNanoseconds()``) bounds every child: one still running
    /// then is killed. What to say, and which exit status follows, is the caller's.
    public mutating func run(
        arguments: [String], environment: [String: String], input: Int32? = nil, killingAt hardLimit: UInt64? = nil,
        restart: (_ signal: Int32, _ crashes: Int) -> Bool
    ) -> Outcome {
        var stop: Int32?
        var crashes = 0
        while true {
            stop = stop ?? takeSignals(child: nil, timeout: 0)
            if let stop { return .stopped(stop) }
            let child: pid_t
            do {
                child = try spawn(arguments: arguments, environment: environment, input: input)
            } catch {
                return .cannotStart(error)
            }
            let (ending, signal, overdue) = wait(for: child, killingAt: hardLimit)
            stop = stop ?? signal
            switch Self.step(after: ending, stop: stop, overdue: overdue) {
            case .end(let outcome):
                return outcome
            case .crashed(let trap):
                crashes += 1
                if !restart(trap, crashes) { return .signaled(trap, stop: nil) }
            }
        }
    }

    /// What follows a child's end in ``run(arguments:environment:input:killingAt:restart:)``.
    enum Step {
        /// The run ends.
        case end(Outcome)
        /// A trap ended the child and no stop signal came: `restart` is asked.
        case crashed(Int32)
    }

    /// What follows a child that ended this way, after the stop signal `stop` (if one came), killed
    /// for outliving the hard limit when `overdue`. Pure.
    static func step(after ending: Ending, stop: Int32?, overdue: Bool) -> Step {
        if overdue { return .end(.overdue) }
        switch ending {
        case .exited(let status): return .end(.exited(status))
        case .signaled(let number) where trapSignals.contains(number) && stop == nil: return .crashed(number)
        case .signaled(let number): return .end(.signaled(number, stop: stop))
        }
    }
}
