import XCTest
@testable import Courier
import CourierSupport

/// `QueueProgress` (`courier get -i`'s display) as the input is read: items are made known line by line, the total
/// says `+` until the input ends, and a finished item is forgotten (an input without end must
/// not grow the display).
final class QueueProgressTests: XCTestCase {
    private func change(_ id: String, _ state: DownloadQueue.State) -> DownloadQueue.Change {
        DownloadQueue.Change(
            item: DownloadQueue.Item(
                id: id, url: URL(string: "http://h/\(id)")!, headers: [:], destination: URL(fileURLWithPath: "/nowhere/\(id)"),
                expectedLength: nil, sha256: nil, priority: 0, metadata: nil, state: state, sequence: 1))
    }

    func testTheTotalCountsTheLinesReadWithAPlusUntilTheInputEnds() {
        // Given a terminal display with one line done before this run and one running
        let written = Locked("")
        let display = QueueProgress(style: .terminal, columns: 100, now: { 0 }, write: { text in written.withLock { $0 += text } })
        display.addDone()
        display.add("a", name: "a.bin")
        display.update(change("a", .running(received: 10, total: 100)))
        XCTAssertTrue(written.current.contains("total: 1 of 2+ done, 1 running"), written.current)

        // When the input ends and the download completes
        display.inputEnded()
        display.update(change("a", .completed(URL(fileURLWithPath: "/nowhere/a"))))

        // Then the total is final
        XCTAssertTrue(written.current.hasSuffix("total: 2 of 2 done  10 B"), written.current)
    }

    func testAFinishedItemIsForgotten() {
        // Given a plain display that saw an item start and fail
        let written = Locked("")
        let display = QueueProgress(style: .plain, columns: 80, now: { 0 }, write: { text in written.withLock { $0 += text } })
        display.add("a", name: "a.bin")
        display.update(change("a", .running(received: 0, total: nil)))
        display.update(change("a", .failed(DownloadQueue.Failure(CourierError(code: .network, message: "gone")))))
        XCTAssertEqual(written.current.split(separator: "\n").count, 2, written.current)

        // When a change for it comes again (another process's, or a late one)
        display.update(change("a", .running(received: 5, total: nil)))

        // Then it is not shown: its name went when it finished
        XCTAssertEqual(written.current.split(separator: "\n").count, 2, written.current)
    }
}
