import XCTest
@testable import Courier

/// Damage to every field of a journal file: detected, reported, repaired where it can be, never a
/// crash and never a wrong record returned. A file that is not ours, or of a newer format, is
/// refused and left byte for byte as it was.
final class JournalCorruptionTests: JournalTestCase {
    /// Three records of different lengths (a damaged length reads differently in each).
    private let records = [Data("alpha: the first record".utf8), Data("beta".utf8), Data("gamma, the third and longest record".utf8)]

    override func setUpWithError() throws {
        try super.setUpWithError()
        try write(records)
    }

    /// Flips the bits of the byte at `offset` with `mask`.
    private func damage(at offset: Int, mask: UInt8 = 0xFF) throws {
        var bytes = try journalBytes()
        bytes[offset] ^= mask
        try setJournalBytes(bytes)
    }

    /// The names in the queue directory starting with `journal.corrupt-`.
    private func corruptCopies() throws -> [String] {
        try queueListing().filter { $0.hasPrefix("journal.corrupt-") }
    }

    // MARK: - The header

    func testAFileWithAnotherMagicIsRefusedAndLeftUntouched() throws {
        try damage(at: 1)
        let before = try journalBytes()
        let error = openError()
        XCTAssertEqual(error?.code, .fileSystem)
        XCTAssertTrue(error?.message.contains("is not a Courier journal") == true, "\(String(describing: error))")
        XCTAssertEqual(try journalBytes(), before)
    }

    func testAJournalOfANewerFormatIsRefusedWithBothVersionsAndLeftUntouched() throws {
        var bytes = try journalBytes()
        bytes[4] = 0x00
        bytes[5] = 0x02
        try setJournalBytes(bytes)
        let error = openError()
        XCTAssertEqual(error?.code, .fileSystem)
        XCTAssertTrue(error?.message.contains("is format 2, newer than this Courier reads (1)") == true, "\(String(describing: error))")
        XCTAssertEqual(try journalBytes(), bytes)
    }

    func testFormatVersionZeroIsRefusedAsNotOurs() throws {
        try damage(at: 5, mask: 0x01)
        XCTAssertTrue(openError()?.message.contains("format 0") == true)
    }

    func testReservedHeaderBytesAreIgnored() throws {
        try damage(at: 10, mask: 0x5A)
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, records)
        XCTAssertEqual(report, Journal.Report(records: 3))
    }

    func testAHeaderCutShortByACrashAtCreationIsWrittenAgain() throws {
        for length in 1..<Journal.headerSize {
            try setJournalBytes(Array(Journal.header[0..<length]))
            let (journal, replayed, report) = try open()
            XCTAssertEqual(replayed, [])
            XCTAssertEqual(report, Journal.Report(truncatedTailBytes: length), "header cut at \(length)")
            try journal.append(Data("new".utf8))
            journal.close()
            let (reopened, again, _) = try open()
            reopened.close()
            XCTAssertEqual(again, [Data("new".utf8)])
        }
    }

    func testAShortFileThatIsNotAHeaderPrefixIsRefused() throws {
        try setJournalBytes(Array("{\"".utf8))
        XCTAssertTrue(openError()?.message.contains("is not a Courier journal") == true)
        XCTAssertEqual(try journalBytes(), Array("{\"".utf8))
    }

    // MARK: - Records

    func testAFlippedPayloadByteSkipsOnlyThatRecord() throws {
        let offset = offsets(of: records)[1]
        try damage(at: offset + Journal.frameHeaderSize + 2, mask: 0x10)
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, [records[0], records[2]])
        XCTAssertEqual(report.records, 2)
        XCTAssertEqual(report.skipped.map(\.offset), [Int64(offset)])
        XCTAssertTrue(report.skipped.first?.reason.contains("checksum mismatch") == true)
        XCTAssertEqual(report.truncatedTailBytes, 0)
    }

    func testAFlippedChecksumByteSkipsOnlyThatRecord() throws {
        let offset = offsets(of: records)[0]
        try damage(at: offset + 5, mask: 0x01)
        let (journal, replayed, report) = try open()
        XCTAssertEqual(replayed, [records[1], records[2]])
        XCTAssertEqual(report.skipped.map(\.offset), [Int64(offset)])
        // The skipped record stays in the file (it frames correctly); appends go after it.
        try journal.append(Data("more".utf8))
        journal.close()
        let (reopened, again, _) = try open()
        defer { reopened.close() }
        XCTAssertEqual(again, [records[1], records[2], Data("more".utf8)])
    }

    func testADamagedLowLengthByteIsCaughtAndTheRestKeptAsACopy() throws {
        let offset = offsets(of: records)[1]
        let original = try journalBytes()
        try damage(at: offset + 3, mask: 0x01)
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        // The checksum covers the length: the record fails, and no plausible header follows it at
        // the offset its damaged length points to, so nothing after it is read at wrong offsets.
        XCTAssertEqual(replayed, [records[0]])
        XCTAssertEqual(report.skipped.count, 1)
        XCTAssertEqual(report.skipped.first?.offset, Int64(offset))
        XCTAssertTrue(report.skipped.first?.reason.contains("cannot be framed") == true, "\(report)")
        XCTAssertEqual(journal.byteCount, Int64(offset))
        let copies = try corruptCopies()
        XCTAssertEqual(copies.count, 1)
        var damaged = original
        damaged[offset + 3] ^= 0x01
        XCTAssertEqual(try Data(contentsOf: queue.appendingPathComponent(copies[0])), Data(damaged))
        XCTAssertEqual(try mode(of: queue.appendingPathComponent(copies[0])), 0o600)
    }

    func testAnImplausibleLengthInTheMiddleKeepsACopyAndCutsTheRest() throws {
        let offset = offsets(of: records)[1]
        let size = try journalBytes().count
        try damage(at: offset, mask: 0x40)
        let (journal, replayed, report) = try open()
        XCTAssertEqual(replayed, [records[0]])
        XCTAssertEqual(report.records, 1)
        XCTAssertEqual(report.skipped.count, 1)
        XCTAssertEqual(report.skipped.first?.offset, Int64(offset))
        XCTAssertTrue(report.skipped.first?.reason.contains("over the maximum") == true)
        XCTAssertTrue(report.skipped.first?.reason.contains("remaining \(size - offset) bytes") == true, "\(report)")
        XCTAssertEqual(try corruptCopies().count, 1)
        // The cut file is whole again: appends and reopens work and report nothing more.
        try journal.append(Data("after".utf8))
        journal.close()
        let (reopened, again, secondReport) = try open()
        defer { reopened.close() }
        XCTAssertEqual(again, [records[0], Data("after".utf8)])
        XCTAssertEqual(secondReport, Journal.Report(records: 2))
    }

    func testEverySingleByteDamageIsSurvivedWithoutAWrongRecord() throws {
        let original = try journalBytes()
        for offset in Journal.headerSize..<original.count {
            for mask: UInt8 in [0x01, 0x80] {
                var bytes = original
                bytes[offset] ^= mask
                try setJournalBytes(bytes)
                for copy in try corruptCopies() { try FileManager.default.removeItem(at: queue.appendingPathComponent(copy)) }
                let (journal, replayed, report) = try open()
                journal.close()
                // What comes back is the original records in order, some missing, none altered.
                var remaining = records[...]
                for record in replayed {
                    guard let index = remaining.firstIndex(of: record) else {
                        return XCTFail("byte \(offset) ^ \(mask): returned a record that was never appended: \(record)")
                    }
                    remaining = records[(index + 1)...]
                }
                XCTAssertLessThan(replayed.count, records.count, "byte \(offset) ^ \(mask): damage went unnoticed")
                XCTAssertTrue(!report.skipped.isEmpty || report.truncatedTailBytes > 0, "byte \(offset) ^ \(mask): not reported")
            }
        }
    }

    // MARK: - Torn tails

    func testATornFinalRecordOfEveryLengthIsCutOffAndReported() throws {
        let original = try journalBytes()
        let last = offsets(of: records)[2]
        for torn in 1..<(Journal.frameHeaderSize + records[2].count) {
            try setJournalBytes(Array(original[0..<last + torn]))
            let (journal, replayed, report) = try open()
            XCTAssertEqual(replayed, [records[0], records[1]], "torn at \(torn)")
            XCTAssertEqual(report, Journal.Report(records: 2, truncatedTailBytes: torn), "torn at \(torn)")
            XCTAssertEqual(journal.byteCount, Int64(last))
            try journal.append(records[2])
            journal.close()
            let (reopened, again, secondReport) = try open()
            reopened.close()
            XCTAssertEqual(again, records)
            XCTAssertEqual(secondReport, Journal.Report(records: 3))
        }
        XCTAssertEqual(try corruptCopies(), [])
    }

    func testAZeroFilledTailIsCutOffAsTorn() throws {
        let original = try journalBytes()
        try setJournalBytes(original + [UInt8](repeating: 0, count: 4096))
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, records)
        XCTAssertEqual(report, Journal.Report(records: 3, truncatedTailBytes: 4096))
        XCTAssertEqual(journal.byteCount, Int64(original.count))
    }

    func testZerosFollowedByDataAreNotMistakenForATornTail() throws {
        let original = try journalBytes()
        try setJournalBytes(original + [UInt8](repeating: 0, count: 8) + [0x01])
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, records)
        // The eight zeros read as an empty record with a wrong checksum; with only a stray byte
        // after it, that record's length is taken as the damage and the rest as unframeable.
        XCTAssertEqual(report.skipped.count, 1)
        XCTAssertEqual(report.skipped.first?.offset, Int64(original.count))
    }
}
