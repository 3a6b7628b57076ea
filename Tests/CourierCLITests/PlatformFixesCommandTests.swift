import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The platform kit as people see it: `courier doctor` says what is active, and the same waiting
/// transfer costs a core without the kit and nothing with it (Docs/PlatformFixes.md).
final class PlatformFixesCommandTests: CommandLineTestCase {
    func testDoctorSaysEachFixIsActiveInTextAndJSON() throws {
        let text = try run(["doctor"])
        XCTAssertEqual(text.status, ExitCode.success, text.err)
        XCTAssertTrue(text.out.contains("\nPlatform fixes (Courier's kit, Docs/PlatformFixes.md)\n"), text.out)
        XCTAssertTrue(text.out.contains("libFoundationNetworking.so"), text.out)
        for section in ["§6.16", "§7.1", "§7.2"] {
            let row = text.out.components(separatedBy: "\n").first { $0.hasPrefix("  \(section) ") && $0.contains("active") }
            XCTAssertNotNil(row, "\(section) in\n\(text.out)")
        }
        let json = try run(["doctor", "--json"])
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(json.out.utf8))
        XCTAssertEqual(report.platformFixes.state, .active)
        XCTAssertTrue(PlatformFixes.Fix.allCases.allSatisfy(report.platformFixes.isActive))
        XCTAssertTrue(report.traps.first { $0.section == "7.1" }?.courier.contains("contained in this process") ?? false)
    }

    func testDoctorSaysTheKitIsDisabledByTheEnvironment() throws {
        let result = try run(["doctor", "--json"], environment: [PlatformFixes.environmentVariable: "off"])
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(result.out.utf8))
        XCTAssertEqual(report.platformFixes.state, .disabled)
        XCTAssertFalse(PlatformFixes.Fix.allCases.contains(where: report.platformFixes.isActive))
        XCTAssertTrue(report.traps.first { $0.section == "7.2" }?.courier.contains("supervised child") ?? false)
    }

    /// The defect the first fix removes (Docs/Platform.md §6.16), measured on the same command:
    /// if the first assertion starts failing, FoundationNetworking no longer spins and the fix
    /// can go.
    func testAWaitingGetSpinsACoreWithoutTheKitAndCostsNothingWithIt() throws {
        let url = server.url("/delay/2000").absoluteString
        let without = try childCPU {
            try run(["get", url, "-o", "out.bin", "--force"], environment: [PlatformFixes.environmentVariable: "off"])
        }
        let with = try childCPU { try run(["get", url, "-o", "out.bin", "--force"]) }
        XCTAssertEqual(without.outcome.status, 0, without.outcome.err)
        XCTAssertEqual(with.outcome.status, 0, with.outcome.err)
        XCTAssertGreaterThan(without.cpu, 0.8, "CPU seconds without the kit for a two-second wait")
        XCTAssertLessThan(with.cpu, 0.4, "CPU seconds with the kit for a two-second wait")
    }

    /// CPU of the children (and their children) this process waited for while `work` ran.
    private func childCPU(_ work: () throws -> Outcome) throws -> (outcome: Outcome, cpu: Double) {
        func children() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        let before = children()
        let outcome = try work()
        return (outcome, children() - before)
    }
}
