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
        var reported: [Int: Int] = [:]
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
                if parts.count == 3, let index = Int(parts[1]), let size = Int(parts[2]) { reported[index] = size }
            }
        }
        XCTAssertFalse(reported.isEmpty, "the child stored something before it was killed")
        let store = try DiskCacheStorage(directory: directory, maximumBytes: 1 << 30)
        // Every file in the directory is a whole entry with the exact bytes of its URL, or was removed as a miss.
        var whole = 0
        var keys: [String] = []
        for folder in DiskCacheStorage.names(in: directory) where folder.count == 64 {
            for name in DiskCacheStorage.names(in: directory.appendingPathComponent(folder)) {
                guard let data = try? Data(contentsOf: directory.appendingPathComponent("\(folder)/\(name)")),
                    let entry = DiskCacheStorage.decode(data)
                else { continue }
                let url = try XCTUnwrap(URL(string: entry.head.url))
                let size = Int(url.lastPathComponent) ?? -1
                let seed = UInt64(url.query?.replacingOccurrences(of: "seed=", with: "") ?? "") ?? 0
                XCTAssertEqual(entry.body, TestServer.deterministicBytes(count: size, seed: seed), "\(url)")
                whole += 1
                keys.append(entry.head.key)
                XCTAssertFalse(store.entries(for: entry.head.key).isEmpty, "the store reads what decodes")
            }
        }
        for (index, size) in reported {
            // Each run's server has its own port: find the entry by its path and query.
            let found = keys.contains { $0.hasSuffix("/bytes/\(size)?seed=\(index)") }
            XCTAssertTrue(found, "entry \(index) was reported stored before the kill")
        }
        XCTAssertGreaterThanOrEqual(whole, reported.count)
    }
}
