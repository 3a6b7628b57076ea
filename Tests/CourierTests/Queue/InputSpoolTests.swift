import XCTest
import Courier

/// ``InputSpool`` on real descriptors (a pipe, a regular file, a socket), without a process: the
/// bytes it moves are in its file, a new spool on the same file goes on from there (as a child
/// restarted after a crash does), and it waits no longer than asked.
final class InputSpoolTests: XCTestCase {
    private var directory: URL!
    private var opened: [Int32] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-spool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for descriptor in opened { close(descriptor) }
        try? FileManager.default.removeItem(at: directory)
        try super.tearDownWithError()
    }

    private var spoolPath: String { directory.appendingPathComponent("input").path }

    private func pipeEnds() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        opened += ends
        return (ends[0], ends[1])
    }

    private func send(_ text: String, to descriptor: Int32) {
        XCTAssertEqual(text.utf8.withContiguousStorageIfAvailable { write(descriptor, $0.baseAddress, $0.count) }, text.utf8.count)
    }

    /// Every line a reader of `spool` gives until it has none (now, or ever).
    private func lines(_ reader: inout InputSpool.Reader) throws -> [String] {
        var lines: [String] = []
        while case .line(let line) = try reader.next(waitingUpTo: 0) {
            lines.append(String(decoding: line.bytes, as: UTF8.self))
        }
        return lines
    }

    private func spooled() throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: spoolPath)), as: UTF8.self)
    }

    func testAPipesBytesMoveIntoTheSpoolAndANewSpoolOnTheSameFileGoesOnFromThem() throws {
        // Given two lines moved out of a pipe by one spool, which then goes away (a crash)
        let ends = pipeEnds()
        send("http://h/a\nhttp://h/b\n", to: ends.write)
        do {
            let first = try InputSpool(source: ends.read, name: "stdin", path: spoolPath)
            XCTAssertEqual(try first.fill(waitingUpTo: 0), .moved)
        }
        XCTAssertEqual(try spooled(), "http://h/a\nhttp://h/b\n", "moved: in the file, gone from the pipe")

        // When a new spool opens the same file and the pipe gets a third line, then its end
        send("http://h/c", to: ends.write)
        let second = try InputSpool(source: ends.read, name: "stdin", path: spoolPath)
        var reader = InputSpool.Reader(second, fills: true)
        XCTAssertEqual(try lines(&reader), ["http://h/a", "http://h/b"], "the last line has no end yet")
        close(ends.write)
        opened.removeAll { $0 == ends.write }

        // Then it reads what the first one moved, then the rest, each line once
        XCTAssertEqual(try lines(&reader), ["http://h/c"])
        XCTAssertEqual(try reader.next(waitingUpTo: 0), .ended)
        XCTAssertEqual(try spooled(), "http://h/a\nhttp://h/b\nhttp://h/c")
    }

    func testARegularFileIsReadWithoutMovingItsOffsetSoARestartLosesNothing() throws {
        // Given a regular file as the input, 1 byte in (as a shell leaves `< file` after a read)
        let file = directory.appendingPathComponent("urls.txt")
        try Data("#http://h/a\nhttp://h/b\n".utf8).write(to: file)
        let descriptor = open(file.path, O_RDONLY)
        opened.append(descriptor)
        lseek(descriptor, 1, SEEK_SET)

        // When a spool reads it all
        let spool = try InputSpool(source: descriptor, name: "urls.txt", path: spoolPath)
        var reader = InputSpool.Reader(spool, fills: true)
        XCTAssertEqual(try lines(&reader), ["http://h/a", "http://h/b"])
        XCTAssertEqual(try reader.next(waitingUpTo: 0), .ended)

        // Then the input's offset has not moved, and a new spool on the same file finds nothing more
        XCTAssertEqual(lseek(descriptor, 0, SEEK_CUR), 1)
        let again = try InputSpool(source: descriptor, name: "urls.txt", path: spoolPath)
        XCTAssertEqual(try again.fill(waitingUpTo: 0), .ended)
        XCTAssertEqual(again.size, spool.size)
    }

    func testASocketIsReadAndWrittenLikeAnyOtherInput() throws {
        // Given a socket as the input (no splice from it to a file)
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        opened += ends
        send("http://h/a\r\nhttp://h/b\n", to: ends[1])
        shutdown(ends[1], Int32(SHUT_WR))

        // When a spool reads it, then its lines and its end come through
        let spool = try InputSpool(source: ends[0], name: "stdin", path: spoolPath)
        var reader = InputSpool.Reader(spool, fills: true)
        XCTAssertEqual(try lines(&reader), ["http://h/a", "http://h/b"])
        XCTAssertEqual(try reader.next(waitingUpTo: 0), .ended)
        XCTAssertEqual(try spooled(), "http://h/a\r\nhttp://h/b\n")
    }

    func testAnEmptyPipeIsWaitedForNoLongerThanAsked() throws {
        // Given a pipe whose writer is there but silent
        let ends = pipeEnds()
        let spool = try InputSpool(source: ends.read, name: "stdin", path: spoolPath)

        // When the spool is asked to wait 50 ms, then it says so after about that long
        let start = Date()
        XCTAssertEqual(try spool.fill(waitingUpTo: 50), .nothingYet)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.04)
    }

    func testADirectoryIsNotAnInput() throws {
        let descriptor = open(directory.path, O_RDONLY)
        opened.append(descriptor)
        XCTAssertThrowsError(try InputSpool(source: descriptor, name: "d", path: spoolPath)) { error in
            XCTAssertEqual((error as? CourierError)?.code, .fileSystem)
            XCTAssertTrue((error as? CourierError)?.message.contains("cannot read the input file d: it is a directory") == true, "\(error)")
        }
    }
}
