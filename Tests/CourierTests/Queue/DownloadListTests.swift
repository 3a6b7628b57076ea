import XCTest
@testable import Courier

/// ``DownloadList`` (`courier get -i`'s list format): lines parsed, their stable ids, and a second
/// line saving to the same file caught by the ledger. No process, no socket.
final class DownloadListTests: XCTestCase {
    private func item(_ id: String, _ path: String) -> DownloadQueue.Item {
        DownloadQueue.Item(
            id: id, url: URL(string: "http://h/x")!, headers: [:], destination: URL(fileURLWithPath: path),
            expectedLength: nil, sha256: nil, priority: 0, metadata: nil, state: .queued, sequence: 1)
    }

    func testTheLedgerNamesTheEarlierLineThatSavesToTheSameFile() {
        var ledger = DownloadList.Ledger()
        XCTAssertNil(ledger.record(line: 1, destination: URL(fileURLWithPath: "/d/a"), id: "get-1"))
        XCTAssertNil(ledger.record(line: 2, destination: URL(fileURLWithPath: "/d/b"), id: "get-2"))
        XCTAssertEqual(ledger.record(line: 7, destination: URL(fileURLWithPath: "/d/a"), id: "get-3"), 1)
        XCTAssertEqual(ledger.count, 2)
    }

    func testTheLedgerListsAnItemOnlyWhenItsLineHasTheSameFileAndId() {
        var ledger = DownloadList.Ledger()
        _ = ledger.record(line: 1, destination: URL(fileURLWithPath: "/d/a"), id: "get-1")
        XCTAssertTrue(ledger.lists(item("get-1", "/d/a")))
        XCTAssertFalse(ledger.lists(item("get-9", "/d/a")), "another URL to the same file: an earlier run's item")
        XCTAssertFalse(ledger.lists(item("get-1", "/d/z")))
    }

    private func line(_ number: Int, _ text: String) -> InputLineBuffer.Line {
        var buffer = InputLineBuffer()
        for _ in 1..<number { buffer.append(Array("#\n".utf8)) }
        buffer.append(Array((text + "\n").utf8))
        var last: InputLineBuffer.Line?
        while let next = try? buffer.next() { last = next }
        return last!
    }

    func testALineGivesItsURLDigestNameAndAStableId() throws {
        let directory = URL(fileURLWithPath: "/d")
        let entry = try XCTUnwrap(
            DownloadList.parse(line(3, "https://h/x/a.iso sha256=\(String(repeating: "AB", count: 32)) out=b.iso"), directory: directory))
        XCTAssertEqual(entry.line, 3)
        XCTAssertEqual(entry.url.absoluteString, "https://h/x/a.iso")
        XCTAssertEqual(entry.sha256, String(repeating: "ab", count: 32))
        XCTAssertEqual(entry.destination.path, "/d/b.iso")
        XCTAssertEqual(entry.id, try DownloadList.parse(line(9, "https://h/x/a.iso out=b.iso"), directory: directory)?.id)
        XCTAssertTrue(entry.id.hasPrefix("get-") && entry.id.count == 36, entry.id)
        XCTAssertNil(try DownloadList.parse(line(1, "  # a comment"), directory: directory))
        XCTAssertEqual(try DownloadList.parse(line(1, "http://h/"), directory: directory)?.name.isEmpty, false)
    }

    func testMistakesNameTheLineAndWhy() {
        let directory = URL(fileURLWithPath: "/d")
        for (text, reason) in [
            ("ftp://h/a", "'ftp://h/a' is not an http:// or https:// URL"),
            ("http://h/a out=../x", "out= takes a plain file name (no '/', not '.' or '..'), not '../x'; -P sets the directory"),
            ("http://h/a size=3", "unknown key 'size=' (the keys are sha256 and out)"),
            ("http://h/a sha256=12", "sha256= takes 64 hexadecimal digits, not '12'"),
        ] {
            XCTAssertThrowsError(try DownloadList.parse(line(2, text), directory: directory)) { error in
                XCTAssertEqual(error as? DownloadList.Mistake, DownloadList.Mistake(line: 2, reason: reason))
            }
        }
        var list = DownloadList(directory: directory)
        XCTAssertNotNil(try list.take(line(1, "http://h/a")))
        XCTAssertThrowsError(try list.take(line(2, "http://other/a"))) { error in
            XCTAssertEqual("\(error)", "line 2: saves to a, as line 1 does; give one of them another out=<name>")
        }
    }
}
