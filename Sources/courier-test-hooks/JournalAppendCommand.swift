import Foundation
import Courier

/// `courier-test-hooks journal-append DIR N [--threads T] [--compact-every K] [--hold SECONDS] [--quiet 1]`:
/// the command the journal's crash tests run as a child process, since a test cannot SIGKILL
/// itself and go on checking. It lives in this test-only executable, not in the shipped `courier`. It opens the journal in DIR, prints
/// `opened <records> skipped <count> truncated <bytes>`, then appends N numbered records per
/// thread and prints `durable <thread> <index>` after each append returns — so the parent knows
/// what was promised before the kill (`COURIER_JOURNAL_KILL_AT`, or its own `kill -9`).
///
/// Record `<thread> <index> ` plus padding of varying length (every 50th about 20 KB, to cross
/// pages and the replay window); a thread continues from its last index in the journal, so runs
/// in one directory build one long sequence per thread. `--compact-every K` (one thread only)
/// compacts to all records after every K appends and prints `compacted <index>`; `--hold` opens,
/// prints, and sleeps with the journal open (the two-process lock test); `--quiet 1` prints only
/// `appended <n> records in <s> s: <r>/s, <syncs> syncs` at the end (the throughput measurement).
struct JournalAppendCommand {
    let directory: URL
    let count: Int
    let threads: Int
    let compactEvery: Int?
    let hold: Double?
    let quiet: Bool

    static let usage = "usage: courier-test-hooks journal-append DIR N [--threads T] [--compact-every K] [--hold SECONDS] [--quiet 1]"

    init(_ arguments: [String]) throws(UsageError) {
        guard arguments.count >= 2, arguments.count % 2 == 0, let count = Int(arguments[1]), count >= 0 else {
            throw UsageError(message: Self.usage)
        }
        directory = URL(fileURLWithPath: arguments[0])
        self.count = count
        var options: [String: String] = [:]
        for index in stride(from: 2, to: arguments.count, by: 2) {
            guard ["--threads", "--compact-every", "--hold", "--quiet"].contains(arguments[index]) else {
                throw UsageError(message: "unknown option '\(arguments[index])'; " + Self.usage)
            }
            options[arguments[index]] = arguments[index + 1]
        }
        threads = options["--threads"].flatMap(Int.init) ?? 1
        compactEvery = options["--compact-every"].flatMap(Int.init)
        hold = options["--hold"].flatMap(Double.init)
        quiet = options["--quiet"] == "1"
        guard threads >= 1, compactEvery == nil || threads == 1 else {
            throw UsageError(message: "--threads must be at least 1, and --compact-every needs one thread")
        }
    }

    /// The payload of record `index` of `thread`.
    static func record(thread: Int, index: Int) -> Data {
        let padding = index % 50 == 49 ? 20_000 + index % 97 : (index * 7919 + thread * 31) % 200
        return Data("\(thread) \(index) ".utf8) + Data(repeating: UInt8(ascii: "a") + UInt8((index + thread) % 26), count: padding)
    }

    /// The thread and index at the start of a record's payload.
    static func parse(_ record: Data) -> (thread: Int, index: Int)? {
        let fields = String(decoding: record.prefix(40), as: UTF8.self).split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, let thread = Int(fields[0]), let index = Int(fields[1]) else { return nil }
        return (thread, index)
    }

    func run() throws -> Int32 {
        let (journal, records, report) = try Journal.open(directory: directory)
        say("opened \(records.count) skipped \(report.skipped.count) truncated \(report.truncatedTailBytes)")
        if let hold {
            Thread.sleep(forTimeInterval: hold)
            journal.close()
            return 0
        }
        var next = [Int](repeating: 0, count: threads)
        for record in records {
            if let (thread, index) = Self.parse(record), thread < threads { next[thread] = index + 1 }
        }
        let started = DispatchTime.now()
        if threads == 1 {
            try append(journal, thread: 0, from: next[0], all: records)
        } else {
            let failures = Failures()
            let done = DispatchGroup()
            for thread in 0..<threads {
                done.enter()
                let start = next[thread]
                Thread {
                    do { try self.append(journal, thread: thread, from: start, all: []) } catch { failures.record(error) }
                    done.leave()
                }.start()
            }
            done.wait()
            if let error = failures.first { throw error }
        }
        if quiet {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            let total = count * threads
            say(
                "appended \(total) records in \(String(format: "%.3f", seconds)) s: \(Int(Double(total) / seconds))/s, \(journal.syncCount) syncs"
            )
        }
        journal.close()
        return 0
    }

    /// Appends `count` records of `thread` from index `start`, compacting to `all` plus them when asked.
    private func append(_ journal: Journal, thread: Int, from start: Int, all: [Data]) throws {
        var all = all
        for index in start..<start + count {
            let record = Self.record(thread: thread, index: index)
            try journal.append(record)
            if !quiet { say("durable \(thread) \(index)") }
            guard let compactEvery else { continue }
            all.append(record)
            if (index + 1) % compactEvery == 0 {
                try journal.compact(to: all)
                if !quiet { say("compacted \(index)") }
            }
        }
    }

    /// One line on stdout in one unbuffered `write`: lines from several threads never mix, and
    /// every line written before a SIGKILL is in the file.
    private func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// The first error of any thread.
    private final class Failures: @unchecked Sendable {  // safe: `errors` is only touched under `lock`
        private let lock = NSLock()
        private var errors: [any Error] = []
        func record(_ error: any Error) { lock.withLock { errors.append(error) } }
        var first: (any Error)? { lock.withLock { errors.first } }
    }
}
