import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

/// Writes one download's body into its partial file, behind the transfer.
///
/// URLSession's callbacks only hand chunks over; the writes happen here, on a serial queue of the
/// writer's own. A slow disk then no longer holds up the manager's
/// delegate queue, whose falling behind is what made URLSession queue the socket's bytes in memory
/// without bound (Docs/Platform.md §2.9). The bytes handed over and not yet written — the backlog — are
/// counted, so the transfer can stop reading the network when it grows (``DownloadPolicy/maximumBufferedBytes``).
///
/// Every operation on the partial file (its directory, open, append, truncate, flush, close,
/// discard), the SHA-256, the crash-safe records and the removal of side files run here, in the
/// order the transfer asked for them. So none races with a write, a record only ever vouches for
/// bytes in the file, and the ending (``finish(_:removing:then:)``) sees every accepted byte written.
///
/// The transfer's decisions never call it: they queue ``Request``s, which the driver
/// (`TransferTask.locked`) hands over while still holding the transfer's lock, so operations
/// queue up in the order of the decisions; nothing here blocks. The writer never takes the
/// transfer's lock: its callbacks run with no lock held, on the call queue (or, for the ending, on
/// the writer's queue).
final class DiskWriter: @unchecked Sendable {  // safe: `file`, `hasher`, `failure` are confined to `queue`
    // @unchecked: `file`, `hasher` and `failure` are only touched by `drain()`, which runs on the
    // serial `queue` and nowhere else; every other mutable field is in `state`, behind its lock.

    /// The partial file to write.
    enum Target: Sendable {
        /// A new private file at this (not yet existing) path.
        case fresh(URL)
        /// A fixed partial file, keeping exactly its first `keeping` bytes.
        case existing(URL, keeping: Int64)

        var url: URL {
            switch self {
            case .fresh(let url), .existing(let url, _): return url
            }
        }
    }

    /// What happens to the file once every accepted byte is written.
    enum Ending: Sendable {
        /// Close it for publishing, after checking the SHA-256 of what it holds when one is expected.
        case publish(expectedSHA256: [UInt8]?, url: URL?)
        /// Close it and keep it for resuming: the resume data (and the record, when there is one)
        /// get the bytes the file really holds, and the file's name if it changed
        /// (``StagingFile/keepForResuming()``).
        case keep(ResumeData, record: URL?)
        /// Remove it: nothing worth continuing.
        case discard
    }

    /// How the ending went.
    struct Settled: Sendable {
        /// The closed file, ready to publish (``Ending/publish(expectedSHA256:url:)`` only).
        var stagedFile: URL?
        /// Its descriptor, still open (and locked, for a random staging file) until it is published.
        var stagedHandle: SideFile.Handle?
        /// The first write error, or a SHA-256 mismatch; the file and side files are then removed.
        var failure: CourierError?
        /// The resume data with the bytes on disk (``Ending/keep(_:record:)`` only).
        var resumeData: ResumeData?
    }

    /// For tests: the writer's backlog, now and at its highest.
    struct Statistics: Sendable {
        var backlog: Int64
        var peakBacklog: Int64
        /// The largest chunk handed over (URLSession's are at most 16 KiB, Docs/Platform.md §2.1).
        var largestChunk: Int
    }

    /// What the queue runs: the transfer's requests, then the ending.
    private enum Operation {
        case request(Request)
        case finish(Ending, removing: [URL], then: @Sendable (Settled) -> Void)
    }

    private struct Waiter {
        let threshold: Int64
        let action: @Sendable () -> Void
    }

    private struct State {
        var operations: [Operation] = []
        /// A drain is scheduled or running on the queue; new operations join it.
        var draining = false
        /// Bytes appended since the last drain was scheduled: appends wake the queue in batches.
        var unscheduledBytes = 0
        /// Bytes accepted and not yet handed to the file.
        var backlog: Int64 = 0
        var peakBacklog: Int64 = 0
        var largestChunk = 0
        /// The download ended without keeping its bytes: writes still queued are skipped.
        var discarding = false
        var finished = false
        var waiter: Waiter?
        var onFailure: (@Sendable (CourierError) -> Void)?
    }

    /// Test-only: a slow or failing disk, without mocking anything but the writer's own pace.
    /// Internal (tests reach it with `@testable import`): nothing outside the library's tests sets
    /// it, and no `package` or public symbol names it (Docs/PublicAPI.md, "Test hooks").
    struct Simulation: Sendable {
        /// Write no faster than this many bytes per second.
        var bytesPerSecond: Int?
        /// Fail (as `ENOSPC`) the write that would take the bytes written past this many.
        var failsAfterBytes: Int64?
    }

    private let queue: DispatchQueue
    private let state = Locked(State())
    /// Appends wake the queue once this many bytes are waiting (any other operation wakes it at
    /// once): one thread hand-off per batch instead of per 16 KiB chunk (Docs/Platform.md §6).
    private let batchBytes: Int
    private let simulation: Simulation?

    // Confined to `queue`.
    private var file: StagingFile?
    private var hasher: SHA256?
    private var failure: CourierError?
    private var bytesWritten: Int64 = 0
    /// A chunk was written at its own offset since the file was last started over: the
    /// streaming SHA-256 no longer follows the file, which is hashed whole before publishing.
    private var positional = false
    /// A SHA-256 is expected: the writer keeps one.
    private var hashing = false

    /// Where actions that call into URLSession run: the manager's ``SessionCore/callQueue``.
    private let callQueue: DispatchQueue

    init(batchBytes: Int, callQueue: DispatchQueue, simulation: Simulation? = nil) {
        // Not on `.global()`: that pool is as wide as the CPUs and runs the manager's own queue,
        // and a write blocked on a slow disk holds its thread. Four writers slowed down there kept
        // the manager's queue from running for up to 1.7 s (URLSession queued the data meanwhile);
        // on the default root, which adds threads, it waited at most a few ms.
        self.queue = DispatchQueue(label: "courier.disk-writer")
        self.batchBytes = max(1, batchBytes)
        self.callQueue = callQueue
        self.simulation = simulation
    }

    /// Called once, on the call queue, when an operation on the file fails before the ending.
    func setFailureHandler(_ handler: @escaping @Sendable (CourierError) -> Void) {
        state.withLock { $0.onFailure = handler }
    }

    var statistics: Statistics {
        state.withLock { Statistics(backlog: $0.backlog, peakBacklog: $0.peakBacklog, largestChunk: $0.largestChunk) }
    }

    /// A file operation a transfer's decision asks for (``FileBody/diskRequests``), handed over by
    /// the driver in the order decided (`TransferTask.locked`).
    enum Request: Sendable {
        /// Make sure this directory exists before the file is opened in it, creating it only when
        /// `mayCreate`; otherwise the writer fails (`destinationFailed`, about `requestURL`).
        case directory(URL, mayCreate: Bool, requestURL: URL?)
        /// Open the partial file (`Target`), with a streaming SHA-256 when `hashing`.
        case open(Target, hashing: Bool)
        /// A chunk at the file's end; it counts in the backlog until written.
        case append(Data)
        /// A split download's chunk at its own offset; the streaming SHA-256 stops (the file is
        /// hashed once it is complete).
        case write(Data, at: Int64)
        /// Start the file over from byte 0 (and the SHA-256 with it).
        case truncate
        /// Remove files, in order with the other operations (a record written earlier stays removed).
        case remove([URL])
        /// Flush the file, then write the resume data to the record with the bytes the file holds.
        case record(ResumeData, URL)

        /// The bytes it adds to the backlog.
        var bytes: Int {
            switch self {
            case .append(let data), .write(let data, _): data.count
            default: 0
            }
        }
    }

    /// Queues `request`, in order with the others (called under the transfer's lock: it never blocks).
    func perform(_ request: Request) {
        enqueue(.request(request), bytes: request.bytes)
    }

    /// Calls `action` on the call queue once the backlog is at most `threshold` (at once if it
    /// already is). Not called if a write fails first: the failure handler is.
    func whenBacklog(atMost threshold: Int64, _ action: @escaping @Sendable () -> Void) {
        let (now, wake) = state.withLock { state -> (Bool, Bool) in
            if state.backlog <= threshold { return (true, false) }
            state.waiter = Waiter(threshold: threshold, action: action)
            // The backlog may be a batch waiting to fill: write it now.
            return (false, schedule(&state))
        }
        if now { callQueue.async(execute: action) }
        if wake { queue.async { self.drain() } }
    }

    /// The last operation: after every accepted byte is written, ends the file as `ending` says
    /// (removing `removing` too when the file is not kept) and calls `then` on the writer's queue.
    func finish(_ ending: Ending, removing: [URL], then: @escaping @Sendable (Settled) -> Void) {
        if case .discard = ending { state.withLock { $0.discarding = true } }
        enqueue(.finish(ending, removing: removing, then: then))
    }

    @discardableResult
    private func enqueue(_ operation: Operation, bytes: Int = 0) -> Int64 {
        let (backlog, wake) = state.withLock { state -> (Int64, Bool) in
            guard !state.finished else { return (state.backlog, false) }
            state.operations.append(operation)
            if case .finish = operation { state.finished = true }
            guard bytes > 0 else { return (state.backlog, schedule(&state)) }
            state.backlog += Int64(bytes)
            state.peakBacklog = max(state.peakBacklog, state.backlog)
            state.largestChunk = max(state.largestChunk, bytes)
            state.unscheduledBytes += bytes
            return (state.backlog, state.unscheduledBytes >= batchBytes && schedule(&state))
        }
        if wake { queue.async { self.drain() } }
        return backlog
    }

    /// Marks a drain as scheduled; `true` when the caller must dispatch it.
    private func schedule(_ state: inout State) -> Bool {
        guard !state.draining, !state.operations.isEmpty else { return false }
        state.draining = true
        state.unscheduledBytes = 0
        return true
    }

    // MARK: - On the queue

    private func drain() {
        while true {
            var (batch, discarding) = state.withLock { state -> ([Operation], Bool) in
                let batch = state.operations
                state.operations = []
                state.unscheduledBytes = 0
                if batch.isEmpty { state.draining = false }
                return (batch, state.discarding)
            }
            if batch.isEmpty { return }
            for operation in batch { run(operation, discarding: &discarding) }
        }
    }

    /// Runs one operation; `discarding` is refreshed after each write, so an ending that drops
    /// the bytes skips the rest of the batch at once.
    private func run(_ operation: Operation, discarding: inout Bool) {
        guard case .request(let request) = operation else {
            if case .finish(let ending, let removing, let then) = operation {
                let settled = end(ending, removing: removing)
                state.withLock {
                    $0.waiter = nil
                    $0.onFailure = nil
                }
                then(settled)
            }
            return
        }
        switch request {
        case .directory(let directory, let mayCreate, let requestURL):
            guard failure == nil else { return }
            if let problem = Self.prepare(directory, mayCreate: mayCreate, requestURL: requestURL) { fail(problem) }
        case .open(let target, let hashing):
            guard failure == nil else { return }
            self.hashing = hashing
            do throws(CourierError) {
                switch target {
                case .fresh(let url):
                    file = try StagingFile(creating: url)
                    hasher = hashing ? SHA256() : nil
                case .existing(let url, let keeping):
                    let opened = try StagingFile(at: url, keeping: keeping)
                    file = opened
                    // The digest covers the whole file, including what an earlier run wrote.
                    if hashing { hasher = try opened.hashPrefix(length: keeping) }
                }
            } catch {
                fail(error)
            }
        case .append(let data), .write(let data, _):
            if failure == nil, !discarding {
                if case .write(_, let offset) = request { writeNow(data, at: offset) } else { writeNow(data) }
            }
            let due = state.withLock { state -> (@Sendable () -> Void)? in
                state.backlog -= Int64(data.count)
                discarding = state.discarding
                guard let waiter = state.waiter, state.backlog <= waiter.threshold else { return nil }
                state.waiter = nil
                return waiter.action
            }
            if let due { callQueue.async(execute: due) }
        case .truncate:
            guard failure == nil, let file else { return }
            do throws(CourierError) {
                if file.length > 0 { try file.truncate() }
                if hashing { hasher = SHA256() }
                positional = false
            } catch {
                fail(error)
            }
        case .remove(let files):
            for url in files { unlink(url.path) }
        case .record(var resumeData, let record):
            guard failure == nil else { return }
            do throws(CourierError) {
                try file?.flush()
            } catch {
                return fail(error)
            }
            // A segmented record's claims were made after their writes were queued (before this
            // record): they are on disk. One stream's record gets what the file holds.
            if resumeData.segments == nil { resumeData.bytesOnDisk = file?.length ?? resumeData.bytesOnDisk }
            // A record that cannot be written leaves the previous one, which is still true.
            try? AtomicFile.write(resumeData.encoded(), to: record)
        }
    }

    /// Why `directory` cannot hold the partial file, after creating it when it is missing and
    /// `mayCreate`; `nil` when it can.
    private static func prepare(_ directory: URL, mayCreate: Bool, requestURL: URL?) -> CourierError? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return nil
        }
        guard mayCreate else {
            return CourierError(
                code: .destinationFailed,
                message: "the directory \(directory.path) does not exist (pass .createIntermediateDirectories to create it)",
                url: requestURL)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return nil
        } catch {
            return CourierError(
                code: .destinationFailed, message: "cannot create the directory \(directory.path)", url: requestURL,
                underlyingError: error)
        }
    }

    private func writeNow(_ data: Data, at offset: Int64? = nil) {
        guard let file else { return fail(CourierError.fileSystem("no partial file is open", url: nil)) }
        if let rate = simulation?.bytesPerSecond, rate > 0 {
            Thread.sleep(forTimeInterval: Double(data.count) / Double(rate))
        }
        if let limit = simulation?.failsAfterBytes, bytesWritten + Int64(data.count) > limit {
            return fail(CourierError.fileSystem("cannot write the staging file", url: file.url, errno: ENOSPC))
        }
        do throws(CourierError) {
            if let offset {
                try file.write(data, at: offset)
                positional = true
                hasher = nil
            } else {
                try file.append(data)
                hasher?.update(data)
            }
            bytesWritten += Int64(data.count)
        } catch {
            fail(error)
        }
    }

    /// Records the first failure and tells the transfer, which stops the download.
    private func fail(_ error: CourierError) {
        guard failure == nil else { return }
        failure = error
        let handler = state.withLock { state -> (@Sendable (CourierError) -> Void)? in
            defer {
                state.onFailure = nil
                state.waiter = nil
            }
            return state.onFailure
        }
        if let handler { callQueue.async { handler(error) } }
    }

    private func end(_ ending: Ending, removing: [URL]) -> Settled {
        var settled = Settled()
        defer { file = nil }
        switch ending {
        case .discard:
            break
        case .keep(var resumeData, let record):
            if failure == nil {
                do throws(CourierError) {
                    if let file {
                        resumeData.partialFile = try file.keepForResuming()
                        if resumeData.segments == nil { resumeData.bytesOnDisk = file.length }
                    }
                    if let record { try? AtomicFile.write(resumeData.encoded(), to: record) }
                    settled.resumeData = resumeData
                    return settled
                } catch {
                    failure = error
                }
            }
        case .publish(let expected, let url):
            if failure == nil {
                do throws(CourierError) {
                    if positional, hashing, let file { hasher = try file.hashPrefix(length: file.length) }
                    let handle = try file?.handOver()
                    if let expected, let actual = hasher?.finalize(), actual != expected {
                        throw CourierError.integrity(
                            "the SHA-256 is \(SHA256.hexString(actual)), \(SHA256.hexString(expected)) was expected", url)
                    }
                    settled.stagedFile = file?.url
                    settled.stagedHandle = handle
                    return settled
                } catch {
                    failure = error
                }
            }
        }
        // Nothing is kept: no partial file or record stays behind.
        file?.discard()
        for url in removing { unlink(url.path) }
        settled.failure = failure
        return settled
    }
}
