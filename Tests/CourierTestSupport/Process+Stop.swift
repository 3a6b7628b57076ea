import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// Asks the child to stop (SIGTERM), waits up to `grace`, then kills it (SIGKILL) and reaps it.
    ///
    /// Foundation's `Process` on Linux spawns without resetting the signal mask, so a child started
    /// from a Dispatch or Swift-concurrency thread (which block SIGTERM) inherits SIGTERM blocked
    /// and never sees `terminate()`: waiting for it alone hung a test.
    public func stopAndWait(grace: TimeInterval = 2) {
        guard isRunning else { return }
        terminate()
        let deadline = Date().addingTimeInterval(grace)
        while isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
