import Foundation
import XCTest

/// A network namespace a test makes for itself (`ip netns add courier-test-<random>`), with the
/// child processes it runs inside and removes afterwards. Needs root and iproute2; the tests
/// that use it skip with the reason otherwise. Every veth is made inside the namespace, so
/// removing the namespace removes them too: nothing is left in the machine's own namespace.
final class NetworkNamespace {
    let name: String
    private var children: [ChildProcess] = []

    /// `swift test` builds every product next to the test bundle.
    static var hooks: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    /// Makes a fresh namespace, or skips the test saying why it cannot.
    init() throws {
        guard getuid() == 0 else { throw XCTSkip("network namespaces need root (CI runs as root)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/sbin/ip")
        else { throw XCTSkip("iproute2's `ip` is not installed") }
        name = "courier-test-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let (status, output) = Self.run(["netns", "add", name])
        guard status == 0 else { throw XCTSkip("cannot make a network namespace here: \(output)") }
    }

    /// Stops every child (closing its input, then SIGKILL by pid) and deletes the namespace.
    func remove() {
        for child in children { child.stop() }
        children = []
        _ = Self.run(["netns", "del", name])
    }

    /// `ip -n <name> <arguments>`; fails the test when it fails.
    func ip(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) {
        let (status, output) = Self.run(["-n", name] + arguments)
        XCTAssertEqual(status, 0, "ip \(arguments.joined(separator: " ")): \(output)", file: file, line: line)
    }

    /// The built `courier` command, next to the hooks.
    static var courier: URL { hooks.deletingLastPathComponent().appendingPathComponent("courier") }

    /// Runs `courier-test-hooks <arguments>` (or another of the built executables) inside the namespace.
    func spawn(_ arguments: [String], executable: URL = NetworkNamespace.hooks) throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            struct MissingExecutable: Error { let path: String }
            throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
        }
        let child = try ChildProcess(["netns", "exec", name, executable.path] + arguments)
        children.append(child)
        return child
    }

    /// Whether `ip netns list` still shows the namespace.
    var exists: Bool { Self.run(["netns", "list"]).output.split(separator: "\n").contains { $0.hasPrefix(name) } }

    private static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A child process whose output lines are collected as they come; its input stays open until
/// ``stop()`` (the hooks exit when it closes).
final class ChildProcess: @unchecked Sendable {  // safe: `lines` is only touched under `condition`
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false

    init(_ arguments: [String]) throws {
        process.executableURL = URL(
            fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip")
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    condition.withLock { lines.append(line) }
                    condition.broadcast()
                }
            }
            condition.withLock { ended = true }
            condition.broadcast()
        }
    }

    /// Every line so far.
    var allLines: [String] { condition.withLock { lines } }

    /// The first line from index `from` on that satisfies `matches`, waiting at most `timeout`
    /// seconds; `nil` if none came (the test then fails: it never hangs).
    func waitForLine(from: Int = 0, timeout: TimeInterval = 10, _ matches: (String) -> Bool) -> (index: Int, line: String)? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var index = from
        while true {
            while index < lines.count {
                if matches(lines[index]) { return (index, lines[index]) }
                index += 1
            }
            if ended || !condition.wait(until: deadline) { return nil }
        }
    }

    /// The exit status once the child has exited, waiting at most `timeout` seconds; `nil` if it runs on.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends `signal` to the child (by its pid).
    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Writes one line to the child's input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the input (the hooks then exit); kills the child by pid if it is still there after 3 s.
    func stop() {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
