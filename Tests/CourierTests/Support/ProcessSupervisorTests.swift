import XCTest
import Courier
#if canImport(Glibc)
import Glibc
#endif

/// `ProcessSupervisor`'s pure parts: which stop signals go on to the child, how a wait status reads,
/// how a signal is named. Its spawning, waiting and signals run end to end in `courier get`'s
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
}
