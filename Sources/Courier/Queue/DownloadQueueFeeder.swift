import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Feeds a ``DownloadQueue`` from a list of downloads read as it comes — a pipe, a file, a
/// terminal — through an ``InputSpool``: `courier get -i`'s loop, for any program that fills a
/// queue from a stream of lines.
///
/// Each line is taken by a ``DownloadList`` (its format, its stable ids, the refusal of two lines
/// saving to one file) and brought into the queue with
/// ``DownloadQueue/reconcile(_:unlisted:replacingExistingFiles:)`` as the lines come, a batch at
/// a time: new lines added (a file already there with the line's `sha256=` adopted as done),
/// failed, paused and cancelled items queued again, an item whose `sha256=` changed replaced.
/// At most ``maximumUnfinished`` items of the input are unfinished (queued or running) at once:
/// reading pauses there, so a producer faster than the downloads waits on a full pipe, and goes
/// on as they finish. Once the input has ended, the queue's items that no line listed (an earlier
/// run's) are paused, keeping their bytes.
///
/// Used by one thread, like its ``InputSpool``; only ``wake`` may be called from others. It holds
/// no lock: it waits for the queue's changes through an observer that only signals it.
public struct DownloadQueueFeeder {
    /// Lines read together: their downloads, and whether the input ended after them.
    public struct Batch: Equatable, Sendable {
        /// The downloads of the lines read (blank lines and comments have none).
        public var entries: [DownloadList.Entry]
        /// The input has no more lines.
        public var inputEnded: Bool

        /// A batch of `entries`, the last of the input when `inputEnded`.
        public init(entries: [DownloadList.Entry] = [], inputEnded: Bool = false) {
            self.entries = entries
            self.inputEnded = inputEnded
        }
    }

    /// Why feeding stopped before the input's items finished. What earlier lines started is left
    /// in the queue, for the caller to stop or leave running.
    public enum Problem: Error {
        /// A line with a mistake, or one saving to the same file as an earlier line.
        case mistake(DownloadList.Mistake)
        /// A line longer than ``InputLineBuffer/maximumLineBytes``.
        case lineTooLong(InputLineBuffer.LineTooLong)
        /// The input could not be read, or its spool kept (``CourierError/Code-swift.struct/fileSystem``).
        case unreadable(CourierError)
        /// A line's destination holds a file not proven to be its download, and replacing
        /// existing files was not asked for (the queue's error, naming the file).
        case destinationExists(DownloadList.Entry, CourierError)
        /// The queue refused the change, or its journal could not be written.
        case queueFailed(CourierError)
    }

    /// How feeding ended without a problem.
    public enum Ending: Equatable, Sendable {
        /// The input ended and every item it listed finished (completed, failed or cancelled:
        /// ``DownloadQueue/State/isFinished``) or left the queue. A paused item is waited for.
        case finished
        /// The caller's `shouldStop` said so.
        case stopped
    }

    /// The most items of the input unfinished at once for a queue running `parallel` downloads:
    /// every slot busy and 256 more waiting, enough to keep each host's slots busy in a mixed list.
    public static func maximumUnfinished(parallel: Int) -> Int { parallel + 256 }

    /// How long one wait for the input lasts before the feeder looks at the queue and `shouldStop`.
    public static let inputWaitMilliseconds: Int32 = 100

    /// The lines taken so far (``DownloadList/lists(_:)``), and where their files are saved.
    public private(set) var list: DownloadList
    /// The most items of the input unfinished (queued or running) at once.
    public let maximumUnfinished: Int
    /// How each line's download is split (``DownloadQueue/NewItem/split``).
    public let split: DownloadSplit
    /// Whether a file in a new line's way is replaced rather than refused.
    public let replacingExistingFiles: Bool
    private var reader: InputSpool.Reader
    /// Read before ``feed(_:display:until:)`` (``readFirst(until:)``), brought in first.
    private var pending: Batch?
    private let wakeup = DispatchSemaphore(value: 0)

    /// A feeder of the lines of `spool` (from its start, then as the input gives them), whose
    /// files are saved in `directory`.
    public init(
        spool: InputSpool, directory: URL, maximumUnfinished: Int, split: DownloadSplit = .off,
        replacingExistingFiles: Bool = false
    ) {
        self.reader = InputSpool.Reader(spool, fills: true)
        self.list = DownloadList(directory: directory)
        self.maximumUnfinished = max(maximumUnfinished, 1)
        self.split = split
        self.replacingExistingFiles = replacingExistingFiles
    }

    /// The spool read.
    public var spool: InputSpool { reader.spool }

    /// Wakes a ``feed(_:display:until:)`` waiting for the queue, so that it asks `shouldStop`
    /// now: call it from a signal handler or another thread when the answer changes.
    public var wake: @Sendable () -> Void {
        { [wakeup] in wakeup.signal() }
    }

    /// The next lines' downloads, up to `count`: those the input has now, waiting
    /// ``inputWaitMilliseconds`` at most for the first. Nothing touches a queue.
    public mutating func read(upTo count: Int) throws(Problem) -> Batch {
        var batch = Batch()
        while batch.entries.count < count {
            switch try Self.next(&reader, waitingUpTo: batch.entries.isEmpty ? Self.inputWaitMilliseconds : 0) {
            case .line(let line):
                do {
                    if let entry = try list.take(line) { batch.entries.append(entry) }
                } catch {
                    throw .mistake(error)
                }
            case .nothingYet:
                return batch
            case .ended:
                batch.inputEnded = true
                return batch
            }
        }
        return batch
    }

    /// Every download of the input, read to its end before any queue or store is touched: how a
    /// fleet worker takes a finished list, so that a mistake in any line adds nothing
    /// (``DownloadQueueStore/addMissing(_:)`` then puts them in). `nil` when `shouldStop`, asked
    /// between reads, said so first.
    public mutating func readAll(until shouldStop: () -> Bool) throws(Problem) -> [DownloadList.Entry]? {
        var entries: [DownloadList.Entry] = []
        while !shouldStop() {
            let batch = try read(upTo: Int.max)
            entries += batch.entries
            if batch.inputEnded { return entries }
        }
        return nil
    }

    /// Each download the spool holds, again, in the input's order: the spool read from its start
    /// and its lines parsed anew, since nothing of them is kept. How a program lists each line's
    /// outcome at the end (by ``DownloadList/Entry/id``); nothing is read from the input.
    public func forEachEntry(_ body: (DownloadList.Entry) -> Void) throws(Problem) {
        var again = InputSpool.Reader(spool, fills: false)
        while case .line(let line) = try Self.next(&again, waitingUpTo: 0) {
            do {
                if let entry = try DownloadList.parse(line, directory: list.directory) { body(entry) }
            } catch {
                throw .mistake(error)
            }
        }
    }

    /// `reader`'s next line, its failures as problems.
    private static func next(_ reader: inout InputSpool.Reader, waitingUpTo milliseconds: Int32) throws(Problem) -> InputSpool.Reader.Next {
        do {
            return try reader.next(waitingUpTo: milliseconds)
        } catch let error as InputLineBuffer.LineTooLong {
            throw .lineTooLong(error)
        } catch let error as CourierError {
            throw .unreadable(error)
        } catch {
            throw .unreadable(CourierError(code: .fileSystem, message: "\(error)"))
        }
    }

    /// Waits for the input's first downloads (or its end) as long as it takes, before any queue
    /// is opened, so that a mistake in the first lines leaves nothing behind; they are brought
    /// into the queue first by ``feed(_:display:until:)``. Returns `false` when `shouldStop`
    /// said so first.
    public mutating func readFirst(until shouldStop: () -> Bool) throws(Problem) -> Bool {
        while pending == nil {
            if shouldStop() { return false }
            let batch = try read(upTo: maximumUnfinished)
            if !batch.entries.isEmpty || batch.inputEnded { pending = batch }
        }
        return true
    }

    /// Reads the input as it comes and brings its lines into `queue`, at most
    /// ``maximumUnfinished`` of them unfinished at once, until the input has ended and every
    /// item it listed finished, or `shouldStop` (asked between steps, and after ``wake``) says
    /// so. Downloads start as soon as their line is read; a mistake is found when its line is
    /// read.
    ///
    /// `display`, when given, is told of each line before the queue changes
    /// (``QueueProgress/add(_:name:)``, or ``QueueProgress/addDone()`` for an item already
    /// completed) and of the input's end, so it sees every change the queue reports.
    public mutating func feed(
        _ queue: DownloadQueue, display: QueueProgress? = nil, until shouldStop: () -> Bool
    ) throws(Problem) -> Ending {
        let observer = queue.addObserver { [wakeup] _ in wakeup.signal() }
        defer { queue.removeObserver(observer) }
        // The ids of the input's items not yet seen finished: at most `maximumUnfinished`.
        var waitedFor = Set<String>()
        var inputEnded = false
        while true {
            if shouldStop() { return .stopped }
            if let batch = pending {
                pending = nil
                try bring(batch.entries, into: queue, display: display, waitedFor: &waitedFor)
                if batch.inputEnded {
                    inputEnded = true
                    display?.inputEnded()
                    try pauseUnlisted(in: queue)
                }
                continue
            }
            waitedFor = waitedFor.filter { !(queue.item($0)?.state.isFinished ?? true) }
            switch Self.step(inputEnded: inputEnded, unfinished: waitedFor.count, limit: maximumUnfinished) {
            case .read(let count):
                pending = try read(upTo: count)
            case .finished:
                return .finished
            case .wait:
                // The observer wakes this thread on every change; the queue's own state decides.
                _ = wakeup.wait(timeout: .now() + .milliseconds(500))
                usleep(20_000)  // a burst of progress changes is looked at once
            }
        }
    }

    /// What the feeding loop does next.
    enum Step: Equatable {
        /// Read up to this many more lines' downloads.
        case read(Int)
        /// The input has ended and every item of it finished.
        case finished
        /// Wait for the queue to finish some.
        case wait
    }

    /// The loop's decision, from what it knows: whether the input has ended, how many of its
    /// items are unfinished, and the cap. Pure.
    static func step(inputEnded: Bool, unfinished: Int, limit: Int) -> Step {
        if !inputEnded, unfinished < limit { return .read(limit - unfinished) }
        if inputEnded, unfinished == 0 { return .finished }
        return .wait
    }

    /// Brings a batch into `queue` (``DownloadQueue/reconcile(_:unlisted:replacingExistingFiles:)``,
    /// the rest of the input still to come, so unlisted items are left). Each line is shown, and
    /// each not yet done put in `waitedFor`, before the queue changes.
    private func bring(
        _ entries: [DownloadList.Entry], into queue: DownloadQueue, display: QueueProgress?, waitedFor: inout Set<String>
    ) throws(Problem) {
        for entry in entries {
            if case .completed = queue.item(entry.id)?.state {
                display?.addDone()
            } else {
                display?.add(entry.id, name: entry.name)
                waitedFor.insert(entry.id)
            }
        }
        do {
            try queue.reconcile(
                entries.map { $0.newItem(split: split) }, unlisted: .leave, replacingExistingFiles: replacingExistingFiles)
        } catch {
            if error.code == .destinationFailed,
                let entry = entries.first(where: { $0.destination.standardizedFileURL.path == error.url?.path })
            {
                throw .destinationExists(entry, error)
            }
            throw .queueFailed(error)
        }
    }

    /// Once the input has ended: pauses the items of `queue` that no line listed, keeping their bytes.
    private func pauseUnlisted(in queue: DownloadQueue) throws(Problem) {
        let list = self.list
        do {
            try queue.reconcile([], unlisted: .pauseUnless(listedEarlier: { list.lists($0) }))
        } catch {
            throw .queueFailed(error)
        }
    }
}
