import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Pause, cancel and remove racing the moment a download publishes its file (issue 20, item 6):
/// every item's final state must say what is on disk.
extension DownloadQueueConcurrencyTests {
    /// What is done to an item shortly after it was added.
    private enum Hit: CaseIterable {
        case cancel, remove, pauseThenResume, cancelThenResume
    }

    /// How one item's end contradicts the disk, if it does.
    private static func contradiction(
        _ item: DownloadQueue.Item?, hit: Hit, destination: URL, expected: Data
    ) -> String? {
        let onDisk = FileManager.default.contents(atPath: destination.path)
        if let onDisk, onDisk != expected { return "wrong bytes published" }
        guard let item else {
            // Removed: forgotten by the queue. A file it published before the removal stays
            // (remove never deletes a published file), but it is whole.
            return hit == .remove ? nil : "the item disappeared"
        }
        switch item.state {
        case .completed(let file):
            if file != destination { return "completed at another file" }
            return onDisk == nil ? "completed without a file" : nil
        case .cancelled:
            return onDisk == nil ? nil : "cancelled with its file published"
        case .failed(let failure):
            return onDisk == nil ? "failed (\(failure.code))" : "failed (\(failure.code)) with its file published"
        case .queued, .running, .paused:
            return "never settled (\(item.state))"
        }
    }

    func testPauseCancelAndRemoveRacingCompletionLeaveEveryStateMatchingTheDisk() throws {
        // Given rounds of 400 items of 100 kB, each hit 0–50 ms after it was added with a
        // cancel, a remove, a pause and a resume, or a cancel and a resume (seeded)
        let rounds = 5
        let count = 400
        let size = 100_000
        var contradictions: [String: Int] = [:]
        var examples: [String] = []
        var outcomes: [String: Int] = [:]
        for round in 0..<rounds {
            var random = SplitMix64(seed: 0x5EED_0600 + UInt64(round))
            var configuration = DownloadQueue.Configuration()
            configuration.maximumRunning = 16
            configuration.maximumRunningPerHost = 16
            let callbacks = DispatchQueue(label: "publish-race.callbacks")
            configuration.callbackQueue = callbacks
            let queueDirectory = directory.appendingPathComponent("queue-\(round)")
            let out = directory.appendingPathComponent("out-\(round)")
            let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
            let completed = Locked(Set<String>())
            queue.addObserver { change in
                if case .completed = change.state { completed.withLock { _ = $0.insert(change.id) } }
            }
            let hits = (0..<count).map { _ in
                (Hit.allCases.randomElement(using: &random)!, Int.random(in: 0...50, using: &random))
            }
            let hitsDone = DispatchGroup()
            let errors = Locked([String]())

            // When each is hit while its download may be publishing. Bodies paced in 8 KiB
            // writes take about as long as the hits' spread, and adds are paced too, so hits land
            // all along the downloads' lives, their ends included. (Before the gate, 3 or 4
            // rounds left 2 to 80 items whose state contradicted the disk, every run.)
            for index in 0..<count {
                let id = "r\(round)-\(index)"
                try queue.add(
                    .init(
                        url: server.url("/bytes/\(size)?seed=\(index)&chunk=8192&chunk_delay_ms=1"),
                        to: out.appendingPathComponent(id), id: id))
                let (hit, delay) = hits[index]
                hitsDone.enter()
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
                    defer { hitsDone.leave() }
                    do {
                        switch hit {
                        case .cancel: try queue.cancel(id)
                        case .remove: try queue.remove(id)
                        case .pauseThenResume:
                            try queue.pause(id)
                            try queue.resume(id)
                        case .cancelThenResume:
                            try queue.cancel(id)
                            try queue.resume(id)
                        }
                    } catch {
                        errors.withLock { $0.append("\(id): \(error)") }
                    }
                }
                if index % 8 == 7 { Thread.sleep(forTimeInterval: 0.002) }
            }
            XCTAssertEqual(hitsDone.wait(timeout: .now() + 30), .success)
            XCTAssertEqual(errors.withLock { $0 }, [])
            waitUntil("every item settled", timeout: 30) {
                queue.items.allSatisfy { item in
                    switch item.state {
                    case .queued, .running: return false
                    case .paused, .failed, .cancelled, .completed: return true
                    }
                }
            }

            // Then each item's state (in memory, and as the journal reopens it) says what is on disk
            func check(_ item: (Int) -> DownloadQueue.Item?, _ label: String) {
                for index in 0..<count {
                    let id = "r\(round)-\(index)"
                    let destination = out.appendingPathComponent(id).standardizedFileURL
                    let expected = TestServer.deterministicBytes(count: size, seed: UInt64(index))
                    let item = item(index)
                    if let problem = Self.contradiction(item, hit: hits[index].0, destination: destination, expected: expected) {
                        contradictions["\(label): \(problem)", default: 0] += 1
                        if examples.count < 10 { examples.append("\(label) \(id) after \(hits[index].0): \(problem)") }
                    }
                }
            }
            check({ queue.item("r\(round)-\($0)") }, "live")
            callbacks.sync {}  // the observer has seen every change so far
            for index in 0..<count {
                let id = "r\(round)-\(index)"
                let state = queue.item(id).map { "\($0.state)".prefix { $0 != "(" } } ?? "removed"
                let published = FileManager.default.fileExists(atPath: out.appendingPathComponent(id).path)
                let note =
                    state != "removed" || !published
                    ? "" : completed.withLock { $0.contains(id) } ? " after completing" : " while publishing"
                outcomes["\(hits[index].0) → \(state)\(note)", default: 0] += 1
            }
            let stopped = expectation(description: "stopped")
            Task {
                await queue.stop()
                stopped.fulfill()
            }
            wait(for: [stopped], timeout: 30)
            // Nothing of any run is left behind: no partial file, no resume record.
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: queueDirectory.appendingPathComponent("parts").path), [],
                "round \(round)")
            let reopened = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
            check({ reopened.item("r\(round)-\($0)") }, "reopened")
            let reopenedStopped = expectation(description: "reopened stopped")
            Task {
                await reopened.stop()
                reopenedStopped.fulfill()
            }
            wait(for: [reopenedStopped], timeout: 30)
        }
        print("publish race: \(rounds) rounds of \(count) items; contradictions: \(contradictions.isEmpty ? "none" : "\(contradictions)")")
        print("publish race outcomes: \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))")
        XCTAssertEqual(contradictions, [:], examples.joined(separator: "\n"))
        XCTAssertEqual(manager.runningTaskCount, 0)
    }
}
