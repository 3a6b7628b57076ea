import CourierTestSupport
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Drives the `courier` executable as a subprocess, the way people run it.
final class CommandLineTests: XCTestCase {
    /// `swift test` builds every product next to the test bundle.
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier")
    }

    private func launch(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            struct MissingExecutable: Error { let path: String }
            throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Reads `pipe` until its first line is complete.
    private func firstLine(of pipe: Pipe) -> String {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return String(decoding: line, as: UTF8.self)
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let (process, out, err) = try launch(arguments)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    func testHelpListsTheCommandsAndSucceeds() throws {
        let result = try run(["--help"])
        XCTAssertEqual(result.status, 0)
        for word in ["courier demo", "courier serve", "--port", "Exit codes"] {
            XCTAssertTrue(result.out.contains(word), word)
        }
    }

    func testUnknownCommandIsAUsageErrorOnOneLine() throws {
        let result = try run(["frobnicate"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.err.hasPrefix("courier: unknown command 'frobnicate'"), result.err)
        XCTAssertTrue(result.out.isEmpty)
    }

    func testTheShippedCommandHasNoHiddenJournalAppendCommand() throws {
        // Given a directory the old hidden command would have made a journal in
        let queue = FileManager.default.temporaryDirectory.appendingPathComponent("no-hook-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: queue) }

        // When the shipped binary is asked for the journal's test command
        let result = try run(["_journal-append", queue.path, "1"])

        // Then it is an unknown command, and nothing was written (courier-test-hooks has it)
        XCTAssertEqual(result.status, 2, result.out)
        XCTAssertTrue(result.err.hasPrefix("courier: unknown command '_journal-append'"), result.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: queue.path))
    }

    func testBadPortIsAUsageError() throws {
        let result = try run(["serve", "--port", "70000"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.err.contains("--port takes a port number 0-65535, not '70000'"), result.err)
        let unknown = try run(["serve", "--prot", "1"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.err.contains("unknown option '--prot' for serve; did you mean --port?"), unknown.err)
        let stray = try run(["demo", "now"])
        XCTAssertEqual(stray.status, 2)
        XCTAssertTrue(stray.err.contains("demo takes no arguments, not 'now'"), stray.err)
    }

    func testServeAnswersRequestsAndStopsOnSIGTERM() throws {
        let (process, out, _) = try launch(["serve", "--port", "0"])
        defer { if process.isRunning { process.terminate() } }
        // The first line names the address.
        let text = firstLine(of: out)
        let address = try XCTUnwrap(text.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") })
        XCTAssertFalse(address.hasSuffix(":0"), "a real port was bound")
        let (body, response) = try syncGet(URL(string: "\(address)/bytes/32?seed=1")!)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(body.count, 32)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    func testServeRootServesADirectoryWithRanges() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-root-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("0123456789".utf8).write(to: root.appendingPathComponent("digits.txt"))
        let (process, out, _) = try launch(["serve", "--root", root.path])
        defer { if process.isRunning { process.terminate() } }
        let address = try XCTUnwrap(firstLine(of: out).split(separator: " ").first { $0.hasPrefix("http://") })
        var request = URLRequest(url: URL(string: "\(address)/files/digits.txt")!)
        request.setValue("bytes=3-5", forHTTPHeaderField: "Range")
        let done = DispatchSemaphore(value: 0)
        let box = Box<(Data, Int)>()
        URLSession(configuration: .ephemeral).dataTask(with: request) { data, response, _ in
            box.append((data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.first?.1, 206)
        XCTAssertEqual(box.first?.0, Data("345".utf8))
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    func testDemoSurvivesServerDropsAndVerifiesTheChecksum() throws {
        let result = try run(["demo"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("67108864 bytes"), result.out)
        XCTAssertTrue(result.out.contains("interruptions survived  2"), result.out)
        XCTAssertTrue(result.out.contains("bytes re-sent           0 "), result.out)
        XCTAssertTrue(result.out.contains("verified"), result.out)
        XCTAssertTrue(result.out.contains("bytes=25165824-"), "continued with Range: \(result.out)")
    }

    private func syncGet(_ url: URL) throws -> (Data, URLResponse?) {
        let done = DispatchSemaphore(value: 0)
        let box = Box<(Data, URLResponse?)>()
        URLSession(configuration: .ephemeral).dataTask(with: url) { data, response, _ in
            box.append((data ?? Data(), response))
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        return try XCTUnwrap(box.first)
    }
}
