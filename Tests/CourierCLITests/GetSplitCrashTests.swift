import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get --split` killed with SIGKILL at random moments, run after run, against a server
/// that caps each connection: the file is published exact once, never before, and each kill costs
/// little more than what the record had not caught up with (Docs/SegmentedDownloads.md).
final class GetSplitCrashTests: CommandLineTestCase {
    func testKillsAtRandomMomentsEndExactAndRefetchLittle() throws {
        // Given a 24 MiB file served at 4 MiB/s per connection
        let size = 24 << 20
        let content = TestServer.deterministicBytes(count: size, seed: 0x5e9)
        server.addFile("kill.bin", data: content, etag: "\"k1\"")
        let url = server.url("/files/kill.bin?rate=4194304").absoluteString
        let saved = directory.appendingPathComponent("kill.bin")
        let arguments = ["get", url, "--split", "4", "-o", "kill.bin", "-s"]
        var generator = SplitMix64(seed: 0x6e7_5917)
        var kills = 0
        var finished = false
        // When it is killed at random moments until a run finishes (at most 8 kills, then it may finish)
        for attempt in 1...20 where !finished {
            let command = try start(arguments)
            if kills < 8 {
                usleep(UInt32.random(in: 150_000...700_000, using: &generator))
                let supervisor = command.process.processIdentifier
                for child in QueueCrashTests.children(of: supervisor) { kill(child, SIGKILL) }
                kill(supervisor, SIGKILL)
            }
            let outcome = finish(command, timeout: 60)
            if outcome.reason == .exit, outcome.status == 0 {
                finished = true
            } else {
                kills += 1
                // Then nothing is ever published before the file is whole
                XCTAssertFalse(FileManager.default.fileExists(atPath: saved.path), "attempt \(attempt): published early")
            }
        }
        // Then the file is exact
        XCTAssertTrue(finished)
        XCTAssertEqual(SHA256.hash(try Data(contentsOf: saved)), SHA256.hash(content))
        // And each kill re-fetched under 1 MiB per connection (plus one MiB for the bytes in flight)
        let served = server.traffic(for: "/files/kill.bin").bodyBytesServed
        let refetched = served - Int64(size)
        print("split kills: \(kills) kills, \(served) bytes served for \(size), \(refetched) re-fetched")
        XCTAssertGreaterThan(kills, 2)
        XCTAssertLessThanOrEqual(refetched, Int64(kills) * 4 * (1 << 20) + (1 << 20))
    }
}
