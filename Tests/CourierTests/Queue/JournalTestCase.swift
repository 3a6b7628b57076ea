import XCTest
@testable import Courier

/// Base class for the journal's tests: a private temporary directory (removed in tearDown) with
/// the queue directory `queue` inside it, and helpers to open the journal and edit its bytes.
class JournalTestCase: XCTestCase {
    /// The private temporary directory; the queue directory's parent.
    var root: URL!

    /// The journal's directory (not created: opening creates it).
    var queue: URL { root.appendingPathComponent("queue") }
    var journalFile: URL { queue.appendingPathComponent("journal") }
    var lockFile: URL { queue.appendingPathComponent("lock") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
        root = nil
        try super.tearDownWithError()
    }

    /// Opens the journal in ``queue``, failing the test with the error's message if it throws.
    func open(file: StaticString = #filePath, line: UInt = #line) throws -> (Journal, records: [Data], report: Journal.Report) {
        do {
            return try Journal.open(directory: queue)
        } catch {
            XCTFail("open failed: \(error.message)", file: file, line: line)
            throw error
        }
    }

    /// Opens, appends `records` one by one, and closes.
    func write(_ records: [Data]) throws {
        let (journal, _, _) = try open()
        for record in records { try journal.append(record) }
        journal.close()
    }

    /// The error `Journal.open` throws for ``queue``, or a failure when it opens.
    func openError(file: StaticString = #filePath, line: UInt = #line) -> CourierError? {
        do {
            let (journal, _, _) = try Journal.open(directory: queue)
            journal.close()
            XCTFail("the journal opened", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// `count` records of varied lengths (0 to a few hundred bytes), each naming its index.
    func sampleRecords(_ count: Int, tag: String = "r") -> [Data] {
        (0..<count).map { index in
            Data("\(tag)\(index):".utf8) + Data(repeating: UInt8(index % 251), count: (index * 37) % 300)
        }
    }

    /// The journal file's bytes.
    func journalBytes() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: journalFile))
    }

    /// Replaces the journal file's bytes (in place: same inode, still private).
    func setJournalBytes(_ bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: journalFile)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// The offset in the file of each record of `records` written in order to a fresh journal.
    func offsets(of records: [Data]) -> [Int] {
        var offsets: [Int] = []
        var position = Journal.headerSize
        for record in records {
            offsets.append(position)
            position += Journal.frameHeaderSize + record.count
        }
        return offsets
    }

    /// Runs `body(i)` for `i` in `0..<count`, each on a thread of its own (not the pool's, which
    /// would run only as many at once as there are cores), and waits for all of them.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                body(index)
                done.leave()
            }.start()
        }
        done.wait()
    }

    /// Runs `body`, failing the test with the error's message if it throws.
    static func expectNoError(
        _ what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line,
        _ body: () throws(CourierError) -> Void
    ) {
        do {
            try body()
        } catch {
            XCTFail("\(what()): \(error.message)", file: file, line: line)
        }
    }

    /// The permission bits of the file at `url`.
    func mode(of url: URL) throws -> mode_t {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { throw POSIXError(.ENOENT) }
        return status.st_mode & 0o7777
    }

    /// Names in ``queue``, sorted.
    func queueListing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: queue.path).sorted()
    }
}
