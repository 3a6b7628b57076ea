import Foundation
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier-test-hooks cache-store DIR COUNT`: the disk cache's crash test runs this as a child
/// process and kills it with SIGKILL at a random moment. It serves `/bytes` in-process, fetches
/// `/bytes/<size>?seed=<i>` for i in 0..<COUNT through a manager whose cache is a disk cache in
/// DIR, and prints `stored <i> <size>` once each answer was stored (the store happens before the
/// completion), so the parent knows what must survive the kill.
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
            let stored = Flag()
            manager.dataTask(with: URLRequest(url: server.url("/bytes/\(size)?seed=\(index)"))) { response in
                if response.response?.value(forHTTPHeaderField: "Cache-Status")?.contains("stored") == true { stored.set() }
                done.signal()
            }.resume()
            done.wait()
            if stored.isSet { FileHandle.standardOutput.write(Data("stored \(index) \(size)\n".utf8)) }
        }
        server.stop()
        return 0
    }

    /// A flag set from the completion and read after it.
    private final class Flag: @unchecked Sendable {
        // @unchecked: set before the semaphore is signalled and read after the wait, which orders the two.
        private var value = false
        func set() { value = true }
        var isSet: Bool { value }
    }
}
