import XCTest
@testable import Courier
@testable import courier

/// How `courier get -i` catches a second line saving to the same file (``InputLedger``), without a
/// process or a socket (the line buffer is the library's: Tests/CourierTests/Queue/InputLineBufferTests.swift).
final class InputLedgerTests: XCTestCase {
    private func item(_ id: String, _ path: String) -> DownloadQueue.Item {
        DownloadQueue.Item(
            id: id, url: URL(string: "http://h/x")!, headers: [:], destination: URL(fileURLWithPath: path),
            expectedLength: nil, sha256: nil, priority: 0, metadata: nil, state: .queued, sequence: 1)
    }

    func testTheLedgerNamesTheEarlierLineThatSavesToTheSameFile() {
        var ledger = InputLedger()
        XCTAssertNil(ledger.record(line: 1, destination: URL(fileURLWithPath: "/d/a"), id: "get-1"))
        XCTAssertNil(ledger.record(line: 2, destination: URL(fileURLWithPath: "/d/b"), id: "get-2"))
        XCTAssertEqual(ledger.record(line: 7, destination: URL(fileURLWithPath: "/d/a"), id: "get-3"), 1)
        XCTAssertEqual(ledger.count, 2)
    }

    func testTheLedgerListsAnItemOnlyWhenItsLineHasTheSameFileAndId() {
        var ledger = InputLedger()
        _ = ledger.record(line: 1, destination: URL(fileURLWithPath: "/d/a"), id: "get-1")
        XCTAssertTrue(ledger.lists(item("get-1", "/d/a")))
        XCTAssertFalse(ledger.lists(item("get-9", "/d/a")), "another URL to the same file: an earlier run's item")
        XCTAssertFalse(ledger.lists(item("get-1", "/d/z")))
    }
}
