import XCTest
@testable import Courier
import CourierTestServer
#if canImport(Glibc)
import Glibc
#endif

/// Real crashes of a process writing the disk cache: `courier-test-hooks cache-store`
/// (Sources/courier-test-hooks/CacheStoreCommand.swift) stores `/bytes` answers and prints
/// `stored <i> <size>` after each; the test kills it with SIGKILL at a random moment, reopens the
/// directory and checks that every entry reported stored is there with its exact bytes, and that
/// nothing in the directory reads as anything but a whole entry or a miss.
final class CacheCrashTests: XCTestCase {
    private var directory: URL!

    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-crash-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        try super.tearDownWithError()
    }

    func testAKilledWriterLeavesOnlyWholeEntriesAndEveryReportedOne() throws {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            return XCTFail("courier-test-hooks is missing at \(executable.path)")  // fail, never skip
        }
        var generator = SystemRandomNumberGenerator()
        // What the child fetched (it may be on disk) and what it reported stored (it must be), by URL.
        var fetched: [String: (size: Int, seed: UInt64)] = [:]
        var reported: [String: (size: Int, seed: UInt64)] = [:]
        for run in 0..<4 {
            let output = directory.deletingLastPathComponent().appendingPathComponent("cache-crash-\(UUID().uuidString).out")
            try Data().write(to: output)
            defer { try? FileManager.default.removeItem(at: output) }
            let process = Process()
            process.executableURL = executable
            process.arguments = ["cache-store", directory.path, "100000"]
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 200_000...500_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal, "run \(run): the child was killed, not finished")
            for line in String(decoding: try Data(contentsOf: output), as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, let index = UInt64(parts[1]), let size = Int(parts[2]) else { continue }
                if parts[0] == "fetching" { fetched[String(parts[3])] = (size, index) }
                if parts[0] == "stored" { reported[String(parts[3])] = (size, index) }
            }
        }
        XCTAssertFalse(reported.isEmpty, "the child stored something before it was killed")
        let store = try DiskCacheStorage(directory: directory, maximumBytes: 1 << 30)
        // Every file in the directory is a whole entry with the exact bytes of a URL the child
        // fetched (its folder is that URL's key hash: no URL is on disk in clear), or was removed as a miss.
        let byHash = Dictionary(
            fetched.map { (DiskCacheStorage.keyHash(CachePolicy.key(for: URL(string: $0.key)!)), $0.value) },
            uniquingKeysWith: { first, _ in first })
        var whole = 0
        for folder in DiskCacheStorage.names(in: directory) where folder.count == 64 {
            for name in DiskCacheStorage.names(in: directory.appendingPathComponent(folder)) {
                guard let data = try? Data(contentsOf: directory.appendingPathComponent("\(folder)/\(name)")),
                    let entry = DiskCacheStorage.decode(data)
                else { continue }
                let source = try XCTUnwrap(byHash[folder], "a file for a URL the child fetched")
                XCTAssertEqual(entry.body, TestServer.deterministicBytes(count: source.size, seed: source.seed), folder)
                XCTAssertEqual(entry.head.key, folder, "the file names its URL by hash only")
                XCTAssertEqual(entry.head.url, "")
                whole += 1
            }
        }
        for (url, source) in reported {
            let entries = store.entries(for: CachePolicy.key(for: URL(string: url)!))
            XCTAssertEqual(
                entries.first?.body, TestServer.deterministicBytes(count: source.size, seed: source.seed),
                "\(url) was reported stored before the kill")
        }
        XCTAssertGreaterThanOrEqual(whole, reported.count)
    }
}
