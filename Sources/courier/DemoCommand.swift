import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer

/// `courier demo`: Courier's main job on an embedded server, with no network. Downloads a
/// generated 64 MiB file, pauses it mid-body (the transfer stops), resumes it (Courier asks for
/// the rest with `Range`/`If-Range`), and verifies every byte.
struct DemoCommand {
    let size = 64 * 1024 * 1024

    init(_ options: OptionParser) throws {}

    func run() throws -> Int32 {
        let server = try TestServer()
        defer { server.stop() }
        let name = "demo.bin"
        let contents = TestServer.deterministicBytes(count: size, seed: 2026)
        server.addFile(name, data: contents)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(getpid())")
        let destination = directory.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Completions on the manager's own queue: this process has no main run loop to deliver to.
        let manager = SessionManager()
        let finished = DispatchSemaphore(value: 0)
        let result = ResultSlot()
        let started = Date()
        var request = URLRequest(url: server.url("/files/\(name)"))
        request.timeoutInterval = 30
        let task = manager.downloadTask(
            with: request, to: .file(destination, options: [.createIntermediateDirectories, .removePreviousFile])
        ) { response in
            result.set(response)
            finished.signal()
        }
        task.resume()

        // Pause once a third has arrived, then continue.
        while task.downloadProgress.completedUnitCount < Int64(size / 3), task.state == .running {
            usleep(1000)
        }
        let pausedAt = task.downloadProgress.completedUnitCount
        task.suspend()
        print("paused at \(pausedAt) bytes (\(percent(pausedAt))); resuming")
        task.resume()
        finished.wait()
        let seconds = Date().timeIntervalSince(started)

        guard let response = result.value, let fileURL = response.fileURL else {
            FileHandle.standardError.write(Data("courier: demo download failed: \(result.value?.error.map { "\($0)" } ?? "no result")\n".utf8))
            return ExitCode.failure
        }
        let written = try Data(contentsOf: fileURL)
        let requests = server.requests.filter { $0.path == "/files/\(name)" }
        let rangeRequest = requests.last?.header("Range") ?? "none"
        print("""
            downloaded  \(written.count) bytes in \(String(format: "%.2f", seconds)) s (\(String(format: "%.0f", Double(written.count) / 1_048_576 / seconds)) MiB/s)
            requests    \(requests.count) (second one asked for \(rangeRequest), answered \(response.response?.statusCode ?? 0))
            verified    \(written == contents ? "every byte matches the source" : "MISMATCH")
            """)
        return written == contents ? ExitCode.success : ExitCode.failure
    }

    private func percent(_ bytes: Int64) -> String {
        String(format: "%.0f%%", Double(bytes) * 100 / Double(size))
    }
}

/// Hands the completion's value to the waiting thread.
final class ResultSlot: Sendable {
    private let lock = NSLock()
    // nonisolated(unsafe): only touched while holding `lock`.
    nonisolated(unsafe) private var stored: DownloadResponse?
    func set(_ value: DownloadResponse) { lock.withLock { stored = value } }
    var value: DownloadResponse? { lock.withLock { stored } }
}
