import Foundation

/// `download`: one GET streamed into the file `--out`, never held in memory. The clock stops
/// when the complete file is at its path; its size is checked against `--expect-bytes` after.
struct DownloadWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let path = options.output ?? ""
        let file = (path.hasPrefix("/") ? URL(fileURLWithPath: path) : cwd.appendingPathComponent(path)).standardizedFileURL

        let arrival = Arrival<Result<Int, BenchFailure>>()
        let stopwatch = Stopwatch()
        client.download(options.request, to: file) { arrival.deliver($0) }
        guard let arrived = arrival.wait(until: deadline) else { throw deadline.exceeded("download running") }
        let measured = stopwatch.stop(at: arrived.at)

        let status = try arrived.value.get()
        // 206: the file was completed by a continuation with `Range` (Courier pauses a download
        // whose disk falls behind, and continues one after a dropped connection); the size
        // check below proves the file complete either way.
        guard status == 200 || status == 206 else { throw BenchFailure("download failed: HTTP \(status)") }
        var info = stat()
        guard stat(file.path, &info) == 0 else { throw BenchFailure("download reported success but \(file.path) is missing") }
        let size = Int64(info.st_size)
        if let expected = options.expectedBytes, size != expected {
            throw BenchFailure("download wrote \(size) bytes to \(file.path), expected \(expected)")
        }
        return ResultLine(
            client: options.client, workload: .download, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration, metrics: .bytes(size))
    }
}
