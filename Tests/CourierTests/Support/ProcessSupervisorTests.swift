import XCTest
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// `ProcessSupervisor`'s pure parts: which stop signals go on to the child, how a wait status reads,
/// how a signal is named, what follows a child's end in a run. Its spawning, waiting and signals run end to end in `courier get`'s
/// supervisor (Tests/CourierCLITests/TrapContainmentTests.swift).
final class ProcessSupervisorTests: XCTestCase {
    func testOnlySignalsNotFromTheTerminalAreForwarded() {
        XCTAssertFalse(ProcessSupervisor.forwards(signalCode: Int32(SI_KERNEL)), "Ctrl-C: the child has its own copy")
        XCTAssertTrue(ProcessSupervisor.forwards(signalCode: Int32(SI_USER)), "kill <pid>")
        XCTAssertTrue(ProcessSupervisor.forwards(signalCode: Int32(SI_QUEUE)), "sigqueue")
        XCTAssertTrue(ProcessSupervisor.forwards(signalCode: Int32(SI_TKILL)), "tgkill")
    }

    func testWaitStatusesDecode() {
        XCTAssertEqual(ProcessSupervisor.Ending(waitStatus: 0), .exited(0))
        XCTAssertEqual(ProcessSupervisor.Ending(waitStatus: 3 << 8), .exited(3))
        XCTAssertEqual(ProcessSupervisor.Ending(waitStatus: SIGILL), .signaled(SIGILL))
        XCTAssertEqual(ProcessSupervisor.Ending(waitStatus: SIGSEGV | 0x80), .signaled(SIGSEGV), "with a core dump")
        XCTAssertNil(ProcessSupervisor.Ending(waitStatus: (SIGSTOP << 8) | 0x7F), "stopped, not ended")
    }

    func testSignalsAreNamedWithTheirNumber() {
        XCTAssertEqual(ProcessSupervisor.describe(signal: SIGILL), "signal 4, SIGILL")
        XCTAssertEqual(ProcessSupervisor.describe(signal: 64), "signal 64")
        XCTAssertTrue(ProcessSupervisor.trapSignals.isSuperset(of: [SIGILL, SIGTRAP, SIGABRT, SIGSEGV]))
        XCTAssertFalse(ProcessSupervisor.trapSignals.contains(SIGKILL), "not a trap: the OOM killer, a person")
    }

    /// A step in words, for comparing.
    private func label(_ step: ProcessSupervisor.Step) -> String {
        switch step {
        case .crashed(let signal): "ask to restart after \(signal)"
        case .end(.exited(let status)): "exit \(status)"
        case .end(.overdue): "overdue"
        case .end(.signaled(let signal, let stop)): "signal \(signal), stop \(stop.map(String.init) ?? "none")"
        case .end(.stopped(let signal)): "stopped \(signal)"
        case .end(.cannotStart): "cannot start"
        }
    }

    func testAfterAChildEndsOnlyATrapWithoutAStopSignalIsOfferedForARestart() {
        let step = ProcessSupervisor.step(after:stop:overdue:)
        // A trap with no stop signal: the caller decides whether to restart
        XCTAssertEqual(label(step(.signaled(SIGILL), nil, false)), "ask to restart after \(SIGILL)")
        XCTAssertEqual(label(step(.signaled(SIGSEGV), nil, false)), "ask to restart after \(SIGSEGV)")
        // A trap while stopping, or any other signal, ends the run with the stop signal if one came
        XCTAssertEqual(label(step(.signaled(SIGILL), SIGTERM, false)), "signal \(SIGILL), stop \(SIGTERM)")
        XCTAssertEqual(label(step(.signaled(SIGINT), SIGINT, false)), "signal \(SIGINT), stop \(SIGINT)")
        XCTAssertEqual(label(step(.signaled(SIGKILL), nil, false)), "signal \(SIGKILL), stop none")
        // An exit is the program's own end, whatever came before
        XCTAssertEqual(label(step(.exited(3), SIGTERM, false)), "exit 3")
        // A child killed for outliving the hard limit ends the run as overdue, even when it was a trap's
        XCTAssertEqual(label(step(.signaled(SIGKILL), nil, true)), "overdue")
        XCTAssertEqual(label(step(.exited(0), nil, true)), "overdue")
    }
}
