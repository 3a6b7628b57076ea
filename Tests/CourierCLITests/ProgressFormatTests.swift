import XCTest
import Courier
@testable import courier

/// `courier get`'s own summary line (the library's ProgressFormat, ProgressPrinter and TerminalSize
/// are tested in Tests/CourierTests/Support).
final class ProgressFormatTests: XCTestCase {
    func testSummary() {
        let mib: Int64 = 1024 * 1024
        XCTAssertEqual(
            ProgressFormat.summary(
                path: "/tmp/a.bin", size: 64 * mib, seconds: 2, bytesReceived: 52 * mib, resumedBytes: 12 * mib, retries: 1),
            "courier: saved /tmp/a.bin (64.0 MiB in 2.0 s, 26.0 MiB/s; continued from 12.0 MiB; 1 retry)")
        XCTAssertEqual(
            ProgressFormat.summary(path: "x", size: 10, seconds: 0, bytesReceived: 10, resumedBytes: 0, retries: 2),
            "courier: saved x (10 B in 0.0 s; 2 retries)")
    }

}
