import XCTest

@testable import Courier

/// The split setting and its command-line spelling (DownloadSplit.swift): one parser for the
/// library, `courier get --split` and the queue's journal.
final class DownloadSplitTests: XCTestCase {
    func testEverySpellingReadsAsItsSetting() {
        let table: [(String, DownloadSplit?)] = [
            ("off", .off), ("1", .connections(1)), ("4", .connections(4)), ("64", .connections(64)),
            ("auto", .automatic), ("auto:32", .automatic(upTo: 32)), ("auto:1", .automatic(upTo: 1)),
            ("0", nil), ("65", nil), ("-2", nil), ("auto:0", nil), ("auto:65", nil), ("auto:", nil), ("", nil),
            ("four", nil), (" 4", nil), ("Auto", nil),
        ]
        for (text, expected) in table {
            XCTAssertEqual(DownloadSplit(argument: text), expected, text)
        }
    }

    func testTheDescriptionReadsBackAsTheSameSetting() {
        for split in [DownloadSplit.off, .connections(8), .automatic, .automatic(upTo: 40)] {
            XCTAssertEqual(DownloadSplit(argument: split.description), split, split.description)
        }
    }

    func testCountsAreClampedAndTheCapApplies() {
        XCTAssertEqual(DownloadSplit.connections(0), .off)
        XCTAssertEqual(DownloadSplit.connections(500), .connections(64))
        XCTAssertFalse(DownloadSplit.off.isSplit)
        XCTAssertFalse(DownloadSplit.connections(1).isSplit)
        XCTAssertTrue(DownloadSplit.automatic.isSplit)
        XCTAssertEqual(DownloadSplit.automatic.cap(perHost: 4), 4)
        XCTAssertEqual(DownloadSplit.automatic.cap(perHost: nil), 16)
        XCTAssertEqual(DownloadSplit.connections(8).cap(perHost: 32), 8)
        XCTAssertEqual(DownloadSplit.connections(8).cap(perHost: 0), 1, "never below one")
    }
}
