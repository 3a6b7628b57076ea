import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// `queue`: what a durable `DownloadQueue` costs over plain download tasks, and what queued items
/// cost in memory (issue 14). Courier only; the files are `--url` with `i=1` … `i=N` added to the
/// query (so each is a distinct URL), published at `DIR/out/1` … `DIR/out/N`.
///
/// - `--mode queue`: a queue in `DIR/queue` with `maximumRunning` and `maximumRunningPerHost`
///   both `--concurrency`; the clock runs from one `add(contentsOf:)` of all N (one journal write
///   and sync) until an observer has seen the last item finish.
/// - `--mode tasks`: the same downloads as plain `downloadTask(with:to: .file(…))` calls with
///   `--concurrency` in flight, each completion starting the next.
/// - `--items-only`: the queue's one slot (`maximumRunning` 1) is first taken by an item whose
///   URL refresher (asked before each attempt) does not answer until the run is over, so that item
///   never gets to send a request and all N items added after it stay queued; times the add and
///   reports the peak RSS with them queued. (A slot held by a request that gets no answer would
///   do as well, but FoundationNetworking spins a core while a request waits — about 2.3 s of CPU
///   per 3 s, raw URLSession too — which would compete with the add on a small machine.)
///
/// Opening the queue, and stopping it after the run, are outside the clock. After it, every item
/// must be completed and every file present, with `--expect-bytes` bytes when given.
struct QueueWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        guard let courier = client as? CourierClient else {
            throw BenchFailure("the queue workload needs the courier client")  // the parser refuses urlsession
        }
        let layout = QueueLayout(directory: options.directory ?? "")
        try layout.prepare()
        if options.itemsOnly { return try queueItems(manager: courier.manager, layout: layout, until: deadline) }
        switch options.mode {
        case .queue: return try downloadThroughQueue(manager: courier.manager, layout: layout, until: deadline)
        case .tasks: return try downloadWithTasks(layout: layout, until: deadline)
        }
    }

    /// File `k`'s URL: `--url` with `i=k` added to its query.
    func fileURL(_ k: Int) -> URL {
        guard var components = URLComponents(url: options.url, resolvingAgainstBaseURL: false) else { return options.url }
        components.percentEncodedQuery = (components.percentEncodedQuery.map { $0 + "&" } ?? "") + "i=\(k)"
        return components.url ?? options.url
    }

    /// The N items, with ids `1` … `N`.
    private func newItems(_ layout: QueueLayout) -> [DownloadQueue.NewItem] {
        (1...options.files).map { DownloadQueue.NewItem(url: fileURL($0), to: layout.file($0), id: String($0)) }
    }

    // MARK: - Modes

    private func downloadThroughQueue(
        manager: SessionManager, layout: QueueLayout, until deadline: Deadline
    )
        throws(BenchFailure) -> ResultLine
    {
        let queue = try Self.openQueue(in: layout.queue, manager: manager, running: options.concurrency)
        defer { Self.stop(queue) }
        let items = newItems(layout)
        let finishes = Finishes(total: options.files)
        queue.addObserver { finishes.note($0) }

        let stopwatch = Stopwatch()
        do {
            try queue.add(contentsOf: items)
        } catch {
            throw BenchFailure("add(contentsOf:) of \(options.files) items failed: \(error)")
        }
        guard let end = finishes.wait(until: deadline) else { throw deadline.exceeded(finishes.progress) }
        let measured = stopwatch.stop(at: end)

        // Every item completed, at its own destination.
        var failed = 0
        var first: String?
        for k in 1...options.files {
            let state = queue.item(String(k))?.state
            if case .completed(let file) = state, file.standardizedFileURL.path == layout.file(k).path { continue }
            failed += 1
            if first == nil { first = "item \(k): \(state.map { "\($0)" } ?? "missing")" }
        }
        if let first { throw BenchFailure("\(failed) of \(options.files) items did not complete; first: \(first)") }
        try checkFiles(layout)
        return line(measured, metrics: .files(.init(count: options.files, concurrency: options.concurrency)))
    }

    private func downloadWithTasks(layout: QueueLayout, until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let window = DownloadWindow(
            client: client, requests: (1...options.files).map { URLRequest(url: fileURL($0), timeoutInterval: options.timeout) },
            files: (1...options.files).map(layout.file), concurrency: options.concurrency)
        let stopwatch = Stopwatch()
        guard let end = window.run(until: deadline) else { throw deadline.exceeded(window.progress) }
        let measured = stopwatch.stop(at: end)
        let outcome = window.outcome
        if outcome.failures > 0 {
            throw BenchFailure(
                "\(outcome.failures) of \(options.files) downloads failed; first: \(outcome.firstFailure ?? "?")")
        }
        try checkFiles(layout)
        return line(measured, metrics: .files(.init(count: options.files, concurrency: options.concurrency)))
    }

    private func queueItems(
        manager: SessionManager, layout: QueueLayout, until deadline: Deadline
    )
        throws(BenchFailure) -> ResultLine
    {
        let gate = Gate()
        defer { gate.open() }  // after the queue stopped (defers run in reverse): the refresher returns into nothing
        let queue = try Self.openQueue(in: layout.queue, manager: manager, running: 1) { configuration in
            // Asked before each attempt, and answering only once the gate opens: the item in the
            // one slot never starts its request, and nothing else can start.
            configuration.refreshesBeforeEachAttempt = true
            configuration.refresher = { _, _ in
                await gate.wait()
                return nil
            }
        }
        defer { Self.stop(queue) }
        // The one slot, taken first (its URL, like the items', is never requested).
        do {
            try queue.add(
                DownloadQueue.NewItem(url: fileURL(0), to: layout.out.appendingPathComponent("blocker"), id: "blocker", priority: 1))
        } catch {
            throw BenchFailure("cannot add the blocking item: \(error)")
        }
        guard case .running = queue.item("blocker")?.state else {
            throw BenchFailure("the blocking item is not running: \(queue.item("blocker").map { "\($0.state)" } ?? "missing")")
        }
        let items = newItems(layout)
        let base = ResourceUsage.now().maxRSSKiB

        let stopwatch = Stopwatch()
        do {
            try queue.add(contentsOf: items)
        } catch {
            throw BenchFailure("add(contentsOf:) of \(options.files) items failed: \(error)")
        }
        // Taken at once: checking the items below allocates, and ru_maxrss is a peak.
        let measured = stopwatch.stop(at: MonotonicClock.seconds())
        guard !deadline.hasPassed else { throw deadline.exceeded("adding \(options.files) items") }

        let notQueued = (1...options.files).count { queue.item(String($0))?.state != .queued }
        guard notQueued == 0 else { throw BenchFailure("\(notQueued) of \(options.files) items are not queued") }
        var info = stat()
        let journal = layout.queue.appendingPathComponent("journal").path
        guard stat(journal, &info) == 0 else { throw BenchFailure("the queue has no journal at \(journal)") }
        return line(
            measured,
            metrics: .items(.init(count: options.files, baseRSSKiB: base, journalBytes: Int64(info.st_size))))
    }

    // MARK: - Helpers

    private func line(
        _ measured: (seconds: Double, cpuSeconds: Double, maxRSSKiB: Int), metrics: ResultLine.Metrics
    )
        -> ResultLine
    {
        ResultLine(
            client: options.client, workload: .queue, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration, metrics: metrics)
    }

    /// Every file present, with `--expect-bytes` bytes when given.
    private func checkFiles(_ layout: QueueLayout) throws(BenchFailure) {
        var wrong = 0
        var first: String?
        for k in 1...options.files {
            var info = stat()
            let path = layout.file(k).path
            let problem: String?
            if stat(path, &info) != 0 {
                problem = "\(path) is missing"
            } else if let expected = options.expectedBytes, Int64(info.st_size) != expected {
                problem = "\(path) has \(info.st_size) bytes, expected \(expected)"
            } else {
                problem = nil
            }
            guard let problem else { continue }
            wrong += 1
            if first == nil { first = problem }
        }
        if let first { throw BenchFailure("\(wrong) of \(options.files) files are wrong; first: \(first)") }
    }

    /// A queue running at most `running` downloads (also per host), the rest as `adjust` leaves it.
    private static func openQueue(
        in directory: URL, manager: SessionManager, running: Int,
        adjust: (inout DownloadQueue.Configuration) -> Void = { _ in }
    ) throws(BenchFailure) -> DownloadQueue {
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = running
        configuration.maximumRunningPerHost = running
        adjust(&configuration)
        do {
            return try DownloadQueue(directory: directory, manager: manager, configuration: configuration)
        } catch {
            throw BenchFailure("cannot open a download queue in \(directory.path): \(error)")
        }
    }

    /// `stop()` from synchronous code: the main thread waits while a task runs it.
    private static func stop(_ queue: DownloadQueue) {
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await queue.stop()
            stopped.signal()
        }
        stopped.wait()
    }
}

/// Where a `queue` run keeps things: the queue's directory `DIR/queue` and the files in `DIR/out`.
struct QueueLayout {
    let queue: URL
    let out: URL

    /// `path` relative to the current directory unless absolute.
    init(directory path: String) {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let base =
            (path.hasPrefix("/")
            ? URL(fileURLWithPath: path, isDirectory: true)
            : cwd.appendingPathComponent(path, isDirectory: true)).standardizedFileURL
        queue = base.appendingPathComponent("queue", isDirectory: true)
        out = base.appendingPathComponent("out", isDirectory: true)
    }

    /// File `k`'s destination.
    func file(_ k: Int) -> URL {
        out.appendingPathComponent(String(k))
    }

    /// Deletes what an earlier run left in `queue` and `out`, and creates `out` (and `DIR`), so
    /// every run starts from an empty queue and no file is already in place.
    func prepare() throws(BenchFailure) {
        let files = FileManager.default
        do {
            for directory in [queue, out] where files.fileExists(atPath: directory.path) {
                try files.removeItem(at: directory)
            }
            try files.createDirectory(at: out, withIntermediateDirectories: true)
        } catch {
            throw BenchFailure("cannot prepare \(out.deletingLastPathComponent().path): \(error)")
        }
    }
}

/// Counts the items an observer has seen finish, and when the last one did.
final class Finishes: Sendable {
    private struct Seen: Sendable {
        var finished: Set<String> = []
        var end: Double?
    }

    private let total: Int
    private let seen = Locked(Seen())
    private let done = DispatchSemaphore(value: 0)

    init(total: Int) {
        self.total = total
    }

    /// An observer's change: counts the item once it is finished (completed, failed or cancelled).
    func note(_ change: DownloadQueue.Change) {
        guard change.state.isFinished else { return }
        let now = MonotonicClock.seconds()
        let isLast = seen.withLock { seen -> Bool in
            guard seen.end == nil, seen.finished.insert(change.id).inserted, seen.finished.count == total else { return false }
            seen.end = now
            return true
        }
        if isLast { done.signal() }
    }

    /// When the last item finished (`MonotonicClock`), or `nil` when `deadline` passed first.
    func wait(until deadline: Deadline) -> Double? {
        guard deadline.wait(for: done) else { return nil }
        return seen.withLock { $0.end }
    }

    /// `k of N items finished`, for a deadline message.
    var progress: String { "\(seen.withLock { $0.finished.count }) of \(total) items finished" }
}

/// Keeps `concurrency` downloads running until every one of `requests` has completed into its
/// file: the first `concurrency` start at once, and each completion starts the next (from the
/// client's queue).
final class DownloadWindow: Sendable {
    /// What a finished window found.
    struct Outcome: Sendable {
        var started = 0
        var finished = 0
        var failures = 0
        var firstFailure: String?
        /// When the last download completed (`MonotonicClock`).
        var end: Double?
    }

    private let client: any BenchClient
    private let requests: [URLRequest]
    private let files: [URL]
    private let concurrency: Int
    private let state = Locked(Outcome())
    private let finished = DispatchSemaphore(value: 0)

    /// Download `k` fetches `requests[k]` into `files[k]`.
    init(client: any BenchClient, requests: [URLRequest], files: [URL], concurrency: Int) {
        precondition(requests.count == files.count)
        self.client = client
        self.requests = requests
        self.files = files
        self.concurrency = concurrency
    }

    /// Runs every download; returns when the last one completed (`MonotonicClock`), or `nil` when
    /// `deadline` passed first.
    func run(until deadline: Deadline) -> Double? {
        guard !requests.isEmpty else { return MonotonicClock.seconds() }
        for _ in 0..<min(concurrency, requests.count) { startNext() }
        guard deadline.wait(for: finished) else { return nil }
        return state.withLock { $0.end }
    }

    var outcome: Outcome { state.withLock { $0 } }

    /// `k of N downloads done`, for a deadline message.
    var progress: String { "\(state.withLock { $0.finished }) of \(requests.count) downloads done" }

    private func startNext() {
        let index = state.withLock { state -> Int? in
            guard state.started < requests.count else { return nil }
            state.started += 1
            return state.started - 1
        }
        guard let index else { return }
        client.download(requests[index], to: files[index]) { self.finish($0, file: self.files[index]) }
    }

    private func finish(_ result: Result<Int, BenchFailure>, file: URL) {
        let now = MonotonicClock.seconds()
        var problem: String?
        switch result {
        // 206: completed by a continuation with Range (see DownloadWorkload); sizes are checked after.
        case .success(let status) where status == 200 || status == 206: break
        case .success(let status): problem = "\(file.lastPathComponent): HTTP \(status)"
        case .failure(let failure): problem = "\(file.lastPathComponent): \(failure)"
        }
        let isLast = state.withLock { state -> Bool in
            if let problem {
                state.failures += 1
                if state.firstFailure == nil { state.firstFailure = problem }
            }
            state.finished += 1
            guard state.finished == requests.count else { return false }
            state.end = now
            return true
        }
        if isLast { finished.signal() } else { startNext() }
    }
}

/// Holds the tasks that wait on it until it is opened (then lets every later one through).
final class Gate: Sendable {
    private struct Waiting: Sendable {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(Waiting())

    /// Returns once the gate is open.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Lets every waiting task go, and every later one through at once.
    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
