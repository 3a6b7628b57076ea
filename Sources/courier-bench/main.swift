import Foundation

// `courier-bench`: one workload, one client, one RESULT line on stdout; everything else on stderr.
let status: Int32
do throws(BenchUsageError) {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == Workload.segmented.rawValue {
        // Its own options and its own server; several RESULT lines.
        if let options = try SegmentedOptions.parse(Array(arguments.dropFirst())) {
            do {
                status = try SegmentedBench(options: options).run()
            } catch {
                Bench.writeToStandardError("courier-bench: segmented: \(error)\n")
                status = Bench.workloadFailure
            }
        } else {
            print(SegmentedOptions.usage)
            status = Bench.success
        }
    } else if arguments.first == "cache-proxy" {
        // Its own options; serves until killed.
        if let options = try CacheProxyOptions.parse(Array(arguments.dropFirst())) {
            do {
                try CacheProxy(options: options).run()
            } catch let error as BenchUsageError {
                Bench.writeToStandardError("courier-bench: cache-proxy: \(error.message)\n")
                status = Bench.usageError
            } catch {
                Bench.writeToStandardError("courier-bench: cache-proxy: \(error)\n")
                status = Bench.workloadFailure
            }
        } else {
            print(CacheProxyOptions.usage)
            status = Bench.success
        }
    } else if arguments.first == "autobahn" {
        // Its own options; the fuzzing server is already running (Docs/bench/autobahn.sh).
        if let options = try AutobahnOptions.parse(Array(arguments.dropFirst())) {
            status = AutobahnClient(options: options).runBlocking()
        } else {
            print(AutobahnOptions.usage)
            status = Bench.success
        }
    } else if let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) {
        status = Bench.run(options)
    } else {
        print(BenchOptions.usage)
        status = Bench.success
    }
} catch {
    Bench.writeToStandardError("courier-bench: \(error.message)\nRun 'courier-bench --help' for usage.\n")
    status = Bench.usageError
}
exit(status)

/// Runs one parsed command line: creates the client, runs the workload, prints the RESULT line.
enum Bench {
    static let success: Int32 = 0
    /// A failed request (`errors=` above 0), download, stream, queued file or run, or the
    /// `--timeout` deadline passed.
    static let workloadFailure: Int32 = 1
    static let usageError: Int32 = 2

    /// The exit status; the RESULT line or the error is already written.
    static func run(_ options: BenchOptions) -> Int32 {
        // The one client of the process, set up before anything is timed.
        let client = options.makeClient()
        let deadline = Deadline(seconds: options.timeout)
        let line: ResultLine
        do {
            switch options.workload {
            case .small, .cached: line = try SmallWorkload(options: options, client: client).run(until: deadline)
            case .download: line = try DownloadWorkload(options: options, client: client).run(until: deadline)
            case .memory: line = try MemoryWorkload(options: options, client: client).run(until: deadline)
            case .stream: line = try StreamWorkload(options: options, client: client).run(until: deadline)
            case .sse: line = try EventsWorkload(options: options, client: client).run(until: deadline)
            case .queue: line = try QueueWorkload(options: options, client: client).run(until: deadline)
            case .websocket: line = try WebSocketWorkload(options: options).run(until: deadline)
            case .segmented:
                // Never parsed into BenchOptions: the command line goes to SegmentedOptions.
                writeToStandardError("courier-bench: segmented takes its own options\n")
                return usageError
            case .idle:
                // Its own line (CPU per wall second, the platform kit's state); nothing to count as errors.
                let idle = try IdleWorkload(options: options, client: client).run(until: deadline)
                FileHandle.standardOutput.write(Data((idle.text + "\n").utf8))
                return success
            }
        } catch {
            writeToStandardError("courier-bench: \(options.workload.rawValue) with \(options.client.rawValue): \(error)\n")
            return workloadFailure
        }
        FileHandle.standardOutput.write(Data((line.text + "\n").utf8))
        if case .requests(let requests) = line.metrics, requests.errors > 0 { return workloadFailure }
        return success
    }

    static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
