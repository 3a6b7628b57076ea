import Foundation
import Courier
#if canImport(Glibc)
import Glibc
#endif

extension QueueCommand {
    /// How reading the input ended.
    enum Ending {
        /// The input ended and every item of it finished.
        case finished
        /// SIGINT or SIGTERM.
        case signal(Int32)
        /// A line with a mistake (exit 2), named in the error.
        case mistake(UsageError)
        /// The input could not be read or kept, the queue could not be updated, or a line's file
        /// is in the way.
        case failure(GetFailure)
    }

    /// Lines read together: their downloads, and whether the input ended after them.
    struct Batch {
        var entries: [DownloadList.Entry]
        var inputEnded: Bool
    }

    /// The most items of the input unfinished (queued, running) at once: every download slot
    /// busy and 256 more waiting, enough to keep each host's slots busy in a mixed list. Reading
    /// pauses at this many and resumes as they finish.
    static func maximumUnfinished(parallel: Int) -> Int { parallel + 256 }

    /// How long one wait for the input lasts before the loop looks at the queue and the signals.
    static let inputWaitMilliseconds: Int32 = 100

    /// The input's spool: the file the supervisor named (``inputVariable``). The child reads its
    /// input from stdin, where the supervisor put it, so without a supervisor there is none.
    static func openSpool(_ options: GetCommand.QueueOptions) throws(GetFailure) -> InputSpool {
        guard let path = ProcessInfo.processInfo.environment[inputVariable] else {
            throw GetFailure(ExitCode.failure, "\(inputVariable) is not set: get -i reads its input only under its supervisor")
        }
        return try InputSpool.opened(source: STDIN_FILENO, name: source(options), path: path)
    }

    /// The input's first downloads (or its end), before the queue is opened; waits for them as
    /// long as it takes, or until a stop signal.
    func firstBatch(
        _ reader: inout InputSpool.Reader, _ list: inout DownloadList, stops: StopSignals
    ) -> Result<Batch, EndingError> {
        while true {
            if let signal = stops.signal { return .failure(EndingError(.signal(signal))) }
            switch readBatch(&reader, &list, upTo: Self.maximumUnfinished(parallel: options.parallel)) {
            case .success(let batch) where batch.entries.isEmpty && !batch.inputEnded: continue
            case let other: return other
            }
        }
    }

    /// ``Ending`` as an error, for a `Result`.
    struct EndingError: Error {
        let ending: Ending
        init(_ ending: Ending) { self.ending = ending }
    }

    /// Reads the input as it comes and hands its lines to the queue, at most
    /// ``maximumUnfinished(parallel:)`` unfinished at once, until the input has ended and every
    /// item of it finished, a stop signal, or a problem. Downloads start as soon as their line
    /// is read; a mistake is found when its line is read, and what earlier lines started is
    /// left to the caller to stop.
    func feed(
        _ queue: DownloadQueue, _ reader: inout InputSpool.Reader, _ list: inout DownloadList, first: Batch,
        shown: QueueProgress, stops: StopSignals, wake: DispatchSemaphore
    ) -> Ending {
        let limit = Self.maximumUnfinished(parallel: options.parallel)
        // The ids of the input's items not yet seen finished: at most `limit`.
        var waitedFor = Set<String>()
        var pending: Batch? = first
        var inputEnded = false
        while true {
            if let signal = stops.signal { return .signal(signal) }
            if let batch = pending {
                pending = nil
                if let problem = reconcile(queue, batch.entries, shown: shown, waitedFor: &waitedFor) { return .failure(problem) }
                if batch.inputEnded {
                    inputEnded = true
                    shown.inputEnded()
                    if let problem = pauseUnlisted(queue, list) { return .failure(problem) }
                }
                continue
            }
            waitedFor = waitedFor.filter { !(queue.item($0)?.state.isFinished ?? true) }
            if !inputEnded, waitedFor.count < limit {
                switch readBatch(&reader, &list, upTo: limit - waitedFor.count) {
                case .success(let batch): pending = batch
                case .failure(let error): return error.ending
                }
                continue
            }
            if inputEnded, waitedFor.isEmpty { return .finished }
            // The observer wakes this thread on every change; the queue's own state decides.
            _ = wake.wait(timeout: .now() + .milliseconds(500))
            usleep(20_000)  // a burst of progress changes is looked at once
        }
    }

    /// The next lines' downloads, up to `count`: those the input has now, waiting
    /// ``inputWaitMilliseconds`` at most for the first.
    func readBatch(
        _ reader: inout InputSpool.Reader, _ list: inout DownloadList, upTo count: Int
    ) -> Result<Batch, EndingError> {
        var batch = Batch(entries: [], inputEnded: false)
        do {
            while batch.entries.count < count {
                switch try reader.nextLine(waitingUpTo: batch.entries.isEmpty ? Self.inputWaitMilliseconds : 0) {
                case .line(let line):
                    if let entry = try list.take(line, from: Self.source(options)) { batch.entries.append(entry) }
                case .nothingYet:
                    return .success(batch)
                case .ended:
                    batch.inputEnded = true
                    return .success(batch)
                }
            }
        } catch let error as UsageError {
            return .failure(EndingError(.mistake(error)))
        } catch {
            return .failure(EndingError(.failure(error as? GetFailure ?? GetFailure(ExitCode.fileSystem, "\(error)"))))
        }
        return .success(batch)
    }
}
