import Foundation
import CourierTestServer

/// `courier serve`: runs the test server until SIGINT or SIGTERM.
struct ServeCommand {
    let port: UInt16
    let root: URL?

    init(_ options: OptionParser) throws {
        port = try options.port("--port")
        if let path = options.string("--root") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError(message: "--root \(path) is not a directory")
            }
            root = URL(fileURLWithPath: path)
        } else {
            root = nil
        }
    }

    func run() throws -> Int32 {
        let server = try TestServer(port: port, root: root)
        // Written unbuffered so a script reading our stdout sees the address at once.
        FileHandle.standardOutput.write(
            Data("CourierTestServer listening on \(server.baseURL.absoluteString) (Ctrl-C to stop)\n".utf8))
        waitForTermination()
        server.stop()
        ProgressPrinter.writeToStandardError("courier: stopped after \(server.requests.count) requests\n")
        return ExitCode.success
    }

    /// Blocks until SIGINT or SIGTERM arrives.
    private func waitForTermination() {
        let stop = DispatchSemaphore(value: 0)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        sources.forEach { $0.cancel() }
    }
}
