import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer
import CourierSupport

/// `courier demo`: Courier's main job with no network. An embedded server offers a generated
/// 64 MiB file and drops the connection part-way through every response; Courier continues
/// each time with `Range`/`If-Range`, checks the SHA-256 while streaming, and publishes the file
/// only when it is whole.
struct DemoCommand {
    let size = 64 * 1024 * 1024
    /// The server cuts each response after this many body bytes.
    let dropAfter = 24 * 1024 * 1024

    func run() throws -> Int32 {
        let server = try TestServer()
        defer { server.stop() }
        let name = "demo.bin"
        let contents = TestServer.deterministicBytes(count: size, seed: 2026)
        let expectedDigest = SHA256.hash(contents)
        server.addFile(name, data: contents, etag: "\"demo-v1\"")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(getpid())")
        let destination = directory.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: directory) }

        var policy = DownloadPolicy()
        policy.expectedSHA256 = expectedDigest
        policy.expectedLength = Int64(size)
        policy.retry.initialDelay = .milliseconds(50)
        // The demo is about dropped connections: let the whole file wait for the disk rather than
        // pause for it too (a debug build hashes slower than loopback delivers).
        policy.maximumBufferedBytes = size
        print(
            "serving \(name) (\(mebibytes(Int64(size)))) on \(server.baseURL.absoluteString); the server drops the connection every \(mebibytes(Int64(dropAfter)))"
        )

        // Completions on the manager's own queue: this process has no main run loop to deliver to.
        let manager = SessionManager()
        let finished = DispatchSemaphore(value: 0)
        let slot = Locked<DownloadResponse?>(nil)
        let started = Date()
        manager.downloadTask(
            with: URLRequest(url: server.url("/files/\(name)?close_after=\(dropAfter)")),
            to: .file(destination, options: [.createIntermediateDirectories, .removePreviousFile]), policy: policy
        ) { response in
            slot.set(response)
            finished.signal()
        }.resume()
        finished.wait()
        let seconds = Date().timeIntervalSince(started)

        guard let response = slot.current, let fileURL = response.fileURL else {
            let reason = slot.current?.error.map { "\($0)" } ?? "no result"
            ProgressPrinter.writeToStandardError("courier: demo download failed: \(reason)\n")
            return ExitCode.failure
        }
        let report = response.report
        let written = try Data(contentsOf: fileURL)
        let digest = SHA256.hexString(SHA256.hash(written))
        let verified = written.count == size && SHA256.hash(written) == expectedDigest
        let ranges = server.requests.compactMap { $0.header("Range") }
        let rows = [
            ("size", "\(written.count) bytes (\(mebibytes(Int64(written.count))))"),
            ("interruptions survived", "\(report.retries) (\(report.attempts) requests; continued with \(ranges.joined(separator: ", ")))"),
            ("bytes re-sent", "\(report.bytesReceived - Int64(size)) (received \(report.bytesReceived) for a \(size)-byte file)"),
            ("throughput", "\(String(format: "%.0f", Double(size) / 1_048_576 / seconds)) MiB/s (\(String(format: "%.2f", seconds)) s)"),
            ("sha256", "\(digest) \(verified ? "verified" : "MISMATCH")"),
        ]
        for (label, value) in rows { print(label.padding(toLength: 24, withPad: " ", startingAt: 0) + value) }
        return verified ? ExitCode.success : ExitCode.failure
    }

    private func mebibytes(_ bytes: Int64) -> String {
        String(format: "%.0f MiB", Double(bytes) / 1_048_576)
    }
}
