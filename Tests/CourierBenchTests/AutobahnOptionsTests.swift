import XCTest
@testable import courier_bench

/// `courier-bench autobahn`'s options (no server involved).
final class AutobahnOptionsTests: XCTestCase {
    private func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try AutobahnOptions.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    func testDefaultsRunEveryCaseAsCourierWithA64MiBMessageLimit() throws {
        let options = try XCTUnwrap(try AutobahnOptions.parse(["--url", "ws://127.0.0.1:9001"]))

        XCTAssertEqual(options.url, URL(string: "ws://127.0.0.1:9001"))
        XCTAssertNil(options.caFile)
        XCTAssertNil(options.cases)
        XCTAssertEqual(options.agent, "courier")
        XCTAssertEqual(options.maximumMessageSize, 64 << 20)
        XCTAssertTrue(options.deflate, "the library's default: permessage-deflate offered")
        XCTAssertFalse(try XCTUnwrap(try AutobahnOptions.parse(["--url", "ws://h:1", "--no-deflate"])).deflate)
        XCTAssertTrue(options.includes(1))
        XCTAssertTrue(options.includes(517))
    }

    func testCasesTakeNumbersAndRanges() throws {
        let options = try XCTUnwrap(
            try AutobahnOptions.parse([
                "--url=wss://localhost:9002", "--cases", "1,3,10-12", "--ca", "/tmp/ca.pem", "--agent", "courier-wss", "--deflate",
            ]))

        XCTAssertEqual(options.cases, [1...1, 3...3, 10...12])
        XCTAssertEqual((1...13).filter(options.includes), [1, 3, 10, 11, 12])
        XCTAssertEqual(options.caFile, "/tmp/ca.pem")
        XCTAssertEqual(options.agent, "courier-wss")
        XCTAssertTrue(options.deflate)
    }

    func testMistakesAreUsageErrors() {
        XCTAssertEqual(usageMessage([]), "autobahn needs --url ws://HOST:PORT")
        XCTAssertNotNil(usageMessage(["--url", "http://127.0.0.1:9001"]))
        XCTAssertNotNil(usageMessage(["--url", "ws://127.0.0.1:9001?case=1"]))
        for cases in ["0", "3-1", "1,,2", "a", "1-2-3", ""] {
            XCTAssertNotNil(usageMessage(["--url", "ws://h:1", "--cases", cases]), cases)
        }
        XCTAssertNotNil(usageMessage(["--url", "ws://h:1", "--agent", "a b"]))
        XCTAssertNotNil(usageMessage(["--url", "ws://h:1", "--case-timeout", "0"]))
        XCTAssertNotNil(usageMessage(["--url", "ws://h:1", "--requests", "3"]))
        XCTAssertEqual(usageMessage(["--url", "ws://h:1", "--deflate=yes"]), "--deflate takes no value")
        XCTAssertNil(try AutobahnOptions.parse(["--help"]))
    }
}
