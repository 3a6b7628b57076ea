import XCTest
import CourierTestServer
@testable import Courier
@testable import courier
import CourierSupport

/// `courier get -i -` fed through a pipe the test keeps open: the input is read as it comes.
/// Downloads start before the input ends, a mistake is reported when its line is read, a fast
/// producer is held back by the pipe, and a child restarted after a crash goes on with every
/// line the last one read.
final class GetInputStreamTests: CommandLineTestCase {
    /// A pipe whose read end is the command's stdin; the test writes the other end.
    private final class InputPipe {
        let reading: FileHandle
        /// The write end, until ``close()``.
        private(set) var writing: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw CocoaError(.fileWriteUnknown) }
            // Close-on-exec, so no other child inherits the write end (and the command sees its
            // end of input when the test closes it); `dup2` onto stdin clears it there.
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            writing = ends[1]
        }

        /// Writes all of `text`, waiting while the pipe is full; `false` once nobody reads it.
        @discardableResult
        func write(_ text: String) -> Bool { Self.write(text, to: writing) }

        /// ``write(_:)`` from another thread, which gets the descriptor rather than the pipe.
        static func write(_ text: String, to descriptor: Int32) -> Bool {
            let bytes = Array(text.utf8)
            var done = 0
            while done < bytes.count {
                let wrote = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, bytes.count - done) }
                if wrote < 0, errno == EINTR { continue }
                guard wrote > 0 else { return false }
                done += wrote
            }
            return true
        }

        /// The end of input.
        func close() {
            if writing >= 0 { Glibc.close(writing) }
            writing = -1
        }

        deinit { close() }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        // A write to a pipe nobody reads any more must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts `courier get -i - <arguments>` reading `input`; the test's copy of the read end is closed.
    private func start(reading input: InputPipe, _ arguments: [String] = []) throws -> Child {
        let command = try start(["get", "-i", "-"] + arguments, standardInput: input.reading)
        try input.reading.close()
        return command
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    private func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: file(name).path) }

    // MARK: - Tests

    func testTheFirstLineIsDownloadedWhileTheInputIsStillOpen() throws {
        // Given a pipe holding one line, kept open
        let input = try InputPipe()
        input.write(server.url("/bytes/1000?seed=1").absoluteString + " out=first.bin\n")
        let command = try start(reading: input)

        // When the command reads it, then its file arrives before the input ends
        waitUntil("first.bin saved while the pipe is open", timeout: 20) { self.exists("first.bin") }
        XCTAssertTrue(command.process.isRunning, "still reading the input")
        input.write(server.url("/bytes/2000?seed=2").absoluteString + " out=second.bin\n")
        waitUntil("second.bin saved while the pipe is open", timeout: 20) { self.exists("second.bin") }

        // Then closing the input ends the command with every path, in the input's order
        input.close()
        let outcome = finish(command)
        XCTAssertEqual(outcome.status, 0, outcome.err)
        XCTAssertEqual(outcome.out, file("first.bin").path + "\n" + file("second.bin").path + "\n")
        XCTAssertEqual(try Data(contentsOf: file("first.bin")), TestServer.deterministicBytes(count: 1000, seed: 1))
        XCTAssertEqual(try Data(contentsOf: file("second.bin")), TestServer.deterministicBytes(count: 2000, seed: 2))
        XCTAssertTrue(outcome.err.contains("all 2 downloads complete"), outcome.err)
    }

    func testADuplicateLineIsAUsageErrorAsSoonAsItIsRead() throws {
        // Given a line whose file has been saved, the input still open
        let input = try InputPipe()
        input.write(server.url("/bytes/100").absoluteString + " out=a\n")
        let command = try start(reading: input)
        waitUntil("a saved", timeout: 20) { self.exists("a") }

        // When a second line saves to the same file
        input.write("# another copy\n" + server.url("/bytes/200").absoluteString + " out=a\n")

        // Then the command ends at once with a usage error naming both lines, the input still open
        waitUntil("the command ends", timeout: 10) { !command.process.isRunning }
        let outcome = finish(command)
        XCTAssertEqual(outcome.status, ExitCode.usage, outcome.err)
        XCTAssertTrue(outcome.err.contains("stdin, line 3: saves to a, as line 1 does"), outcome.err)
        XCTAssertEqual(try Data(contentsOf: file("a")).count, 100, "the first line's file stays")
    }

    func testALineOverTheLimitIsAUsageErrorAndEarlierDownloadsKeepTheirBytesForTheRerun() throws {
        // Given a slow download started from line 1, the input still open
        let body = TestServer.deterministicBytes(count: 1_000_000, seed: 9)
        server.addFile("slow.bin", data: body)
        let line = server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString + "\n"
        let input = try InputPipe()
        input.write(line)
        let command = try start(reading: input, ["--state", "../logs/state"])
        waitUntil("bytes kept", timeout: 20) {
            let parts = self.logs.appendingPathComponent("state/parts")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: parts.path)) ?? []
            return names.contains { $0.hasSuffix("-resume") || $0.hasSuffix(".courier-resume") }
        }

        // When line 2 is one byte over the limit (and never ends)
        let url = server.url("/bytes/10").absoluteString + "?q="
        input.write(url + String(repeating: "a", count: InputLineBuffer.maximumLineBytes + 1 - url.utf8.count))

        // Then the command stops at once with a usage error naming line 2, publishing nothing
        waitUntil("the command ends", timeout: 10) { !command.process.isRunning }
        let outcome = finish(command)
        XCTAssertEqual(outcome.status, ExitCode.usage, outcome.err)
        XCTAssertTrue(outcome.err.contains("stdin, line 2: longer than 65536 bytes"), outcome.err)
        XCTAssertEqual(try listing(), [], "line 1's download stopped before it could finish")

        // And a rerun with line 1 alone continues line 1's download from its bytes
        server.clearRequests()
        let fixed = logs.appendingPathComponent("fixed.txt")
        try Data(line.utf8).write(to: fixed)
        let rerun = try run(["get", "-i", fixed.path, "--state", "../logs/state", "-s"], timeout: 60)
        XCTAssertEqual(rerun.status, 0, rerun.err)
        XCTAssertEqual(try Data(contentsOf: file("slow.bin")), body)
        XCTAssertNotNil(server.requests.first?.header("Range"), "continued, not started over")
    }

    func testAProducerFasterThanTheDownloadsIsHeldBackAndMemoryStaysSmall() throws {
        // Given a producer of endless distinct lines whose downloads each take 2 s
        let input = try InputPipe()
        let prefix = server.url("/delay/2000").absoluteString
        let written = Locked<Int>(0)
        let producerDone = DispatchSemaphore(value: 0)
        let command = try start(reading: input, ["-s"])
        let descriptor = input.writing
        Thread.detachNewThread {
            var number = 0
            while true {
                number += 1
                let line = "\(prefix) out=f\(number)\n"
                guard InputPipe.write(line, to: descriptor) else { break }
                written.withLock { $0 += line.utf8.count }
            }
            producerDone.signal()
        }

        // When the command has run for a few seconds
        sleep(4)

        // Then it has taken only what its limit of unfinished items needs (plus a pipe and a
        // chunk or two), not what the producer could write, and its memory stays small
        let taken = written.current
        let supervisor = command.process.processIdentifier
        let peaks = ([supervisor] + QueueCrashTests.children(of: supervisor)).map(Self.peakResidentKilobytes)
        print("held-back producer: \(taken) bytes written in 4 s; peak RSS (KiB) supervisor, child: \(peaks)")
        XCTAssertLessThan(taken, 1_000_000, "the command reads only as its downloads finish")
        XCTAssertGreaterThan(taken, 10_000, "the command reads ahead of its downloads")
        for peak in peaks { XCTAssertLessThan(peak, 200_000, "peak RSS in KiB") }

        // And SIGTERM still stops it as before; the producer then finds nobody reading
        kill(supervisor, SIGTERM)
        let outcome = finish(command)
        XCTAssertEqual(outcome.status, ExitCode.terminated, outcome.err)
        XCTAssertEqual(producerDone.wait(timeout: .now() + 10), .success, "the producer's writes fail once the command is gone")
    }

    func testSIGTERMWhileWaitingForInputStopsTheCommand() throws {
        // Given a command whose only line is done, waiting for more input
        let input = try InputPipe()
        input.write(server.url("/bytes/10").absoluteString + " out=one\n")
        let command = try start(reading: input)
        waitUntil("one saved", timeout: 20) { self.exists("one") }

        // When SIGTERM comes
        kill(command.process.processIdentifier, SIGTERM)

        // Then it stops at once, as it does while downloading
        waitUntil("the command ends", timeout: 5) { !command.process.isRunning }
        let outcome = finish(command)
        XCTAssertEqual(outcome.status, ExitCode.terminated, outcome.err)
        XCTAssertTrue(outcome.err.contains("interrupted; run the same command again"), outcome.err)
    }

    func testAChildRestartedAfterACrashGoesOnWithEveryLineTheLastOneRead() throws {
        // Given two slow downloads read from a pipe that stays open
        let slow = [TestServer.deterministicBytes(count: 600_000, seed: 21), TestServer.deterministicBytes(count: 600_000, seed: 22)]
        server.addFile("a.bin", data: slow[0])
        server.addFile("b.bin", data: slow[1])
        let input = try InputPipe()
        input.write(
            """
            \(server.url("/files/a.bin?chunk=16384&chunk_delay_ms=40").absoluteString)
            \(server.url("/files/b.bin?chunk=16384&chunk_delay_ms=40").absoluteString)

            """)
        let command = try start(reading: input)
        waitUntil("both downloads running", timeout: 20) {
            Set(self.server.requests.map(\.path)).isSuperset(of: ["/files/a.bin", "/files/b.bin"])
        }

        // When the child dies of a trap signal (the supervisor starts a new one) and a third line follows
        let supervisor = command.process.processIdentifier
        let first = QueueCrashTests.children(of: supervisor)
        XCTAssertEqual(first.count, 1)
        for child in first { kill(child, SIGABRT) }
        waitUntil("a new child", timeout: 10) {
            let now = QueueCrashTests.children(of: supervisor)
            return !now.isEmpty && now != first
        }
        input.write(server.url("/bytes/3000?seed=3").absoluteString + " out=c.bin\n")
        input.close()

        // Then every line is downloaded, and stdout lists all three in the input's order
        let outcome = finish(command, timeout: 60)
        XCTAssertEqual(outcome.status, 0, outcome.err)
        XCTAssertTrue(outcome.err.contains("crashed (signal 6, SIGABRT)"), outcome.err)
        XCTAssertEqual(outcome.out, ["a.bin", "b.bin", "c.bin"].map { file($0).path + "\n" }.joined())
        XCTAssertEqual(try Data(contentsOf: file("a.bin")), slow[0])
        XCTAssertEqual(try Data(contentsOf: file("b.bin")), slow[1])
        XCTAssertEqual(try Data(contentsOf: file("c.bin")), TestServer.deterministicBytes(count: 3000, seed: 3))
        XCTAssertTrue(outcome.err.contains("all 3 downloads complete"), outcome.err)
    }

    // MARK: - Helpers

    /// `VmHWM` of `/proc/<pid>/status`: the process's peak resident memory, in KiB (0 if gone).
    private static func peakResidentKilobytes(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
