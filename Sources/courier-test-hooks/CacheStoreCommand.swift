import Foundation
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier-test-hooks cache-store DIR COUNT`: the disk cache's crash test runs this as a child
/// process and kills it with SIGKILL at a random moment. It serves `/bytes` in-process, fetches
/// `/bytes/<size>?seed=<i>` for i in 0..<COUNT through a manager whose cache is a disk cache in
/// DIR, and prints `fetching <i> <size> <url>` before each request and `stored <i> <size> <url>`
/// once the cache holds the answer (it is stored before the completion runs), so the parent knows
/// what may be on disk and what must survive the kill (the files name URLs only by their hash).
enum CacheStoreCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.count == 2, let count = Int(arguments[1]) else { throw UsageError(message: "usage: cache-store DIR COUNT") }
        let server = try TestServer()
        var configuration = SessionManager.Configuration()
        configuration.responseCache = try ResponseCache.disk(directory: URL(fileURLWithPath: arguments[0]), maximumBytes: 1 << 30)
        let manager = SessionManager(configuration: configuration)
        for index in 0..<count {
            // Sizes vary so that kills land in small and large writes alike.
            let size = 1_000 + (index * 7_919) % 300_000
            let done = DispatchSemaphore(value: 0)
            let request = URLRequest(url: server.url("/bytes/\(size)?seed=\(index)"))
            let url = request.url?.absoluteString ?? ""
            FileHandle.standardOutput.write(Data("fetching \(index) \(size) \(url)\n".utf8))
            manager.dataTask(with: request) { _ in done.signal() }.resume()
            done.wait()
            if configuration.responseCache?.storedResponse(for: request) != nil {
                FileHandle.standardOutput.write(Data("stored \(index) \(size) \(url)\n".utf8))
            }
        }
        server.stop()
        return 0
    }
}
