import Foundation
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The reachability tests' child processes. A test makes a network namespace, runs one of these
/// inside it (`ip netns exec NAME courier-test-hooks network-…`) and changes the namespace's links,
/// addresses and routes from outside, reading the lines printed here. Each prints unbuffered lines
/// and ends when its standard input closes, so a test that stops (or crashes) never leaves it behind.
enum NetworkCommands {
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Exits when standard input closes (the parent test is done or gone).
    static func exitWhenInputCloses() {
        Thread.detachNewThread {
            while FileHandle.standardInput.availableData.count > 0 {}
            exit(0)
        }
    }

    /// `path <status> in-use=<names> interfaces=<name>:<up|down>:<carrier|no-carrier>:<addresses>…`
    static func describe(_ path: NetworkPath) -> String {
        let inUse = path.interfacesInUse.map(\.name).joined(separator: ",")
        let interfaces = path.interfaces.map { interface in
            [
                interface.name, interface.kind.rawValue, interface.isUp ? "up" : "down",
                interface.hasCarrier ? "carrier" : "no-carrier", interface.addresses.joined(separator: ";"),
            ].joined(separator: ":")
        }
        return "path \(path.status.rawValue) in-use=\(inUse) interfaces=\(interfaces.joined(separator: ","))"
    }

    /// `network-monitor [HOST…]`: prints the path at start and on every change, with each host's
    /// answer (`host <h> reachable|unreachable`) when it changed; also the refresh count
    /// (`refreshes <n>`) and the process's CPU time (`cpu <ticks>`) when asked with a line `stat`.
    static func monitor(_ hosts: [String]) -> Int32 {
        let monitor = NetworkMonitor(debounce: .milliseconds(50))
        let answers = HostAnswers()
        let report: @Sendable (NetworkPath) -> Void = { path in
            say(describe(path))
            for host in hosts {
                let answer = monitor.reachability(of: host)
                if answers.changed(host, answer.isReachable) { say("host \(host) \(answer.isReachable ? "reachable" : "unreachable")") }
            }
        }
        monitor.addObserver(report)
        monitor.start()
        say("ready \(monitor.isMonitoring ? "monitoring" : "not-monitoring")")
        while let line = readLine() {
            if line == "stat" {
                say("refreshes \(monitor.refreshCount) cpu \(cpuTicks())")
            }
        }
        return 0
    }

    /// utime + stime of this process, in clock ticks (/proc/self/stat fields 14 and 15).
    static func cpuTicks() -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return -1 }
        return user + system
    }

    /// Exits when the test closes stdin, serves on all addresses (inside the test's own
    /// namespace), prints `server <port>`, and makes a manager that waits `wait` seconds for
    /// connectivity and prints its events.
    static func serveAndMakeManager(wait: Double?) throws -> (TestServer, Int, SessionManager) {
        exitWhenInputCloses()
        let server = try TestServer(host: "0.0.0.0")
        let port = server.baseURL.port ?? 0
        say("server \(port)")
        var configuration = SessionManager.Configuration()
        configuration.waitsForConnectivity = wait.map { .milliseconds(Int($0 * 1000)) }
        configuration.eventMonitors = [LineMonitor()]
        return (server, port, SessionManager(configuration: configuration))
    }

    /// `network-fetch WAIT_SECONDS|none PATH`: serves on all addresses (inside the test's own namespace),
    /// prints `server <port>`, then GETs `http://127.0.0.1:<port>PATH` with waitsForConnectivity
    /// and prints `event pause <reason>` / `event pause-ended <reason>`, then `completed <status>
    /// <bytes> pauses=<reasons> retries=<n>` or `failed <code> <message>`.
    static func fetch(wait: Double?, path: String) throws -> Int32 {
        let (server, port, manager) = try serveAndMakeManager(wait: wait)
        let done = DispatchSemaphore(value: 0)
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        manager.dataTask(with: request) { response in
            switch response.result {
            case .success(let data):
                let pauses = response.metrics?.pauses.map(\.reason.rawValue).joined(separator: ",") ?? ""
                say(
                    "completed \(response.response?.statusCode ?? 0) \(data.count) pauses=\(pauses) retries=\(response.metrics?.retries.count ?? -1) requests=\(server.requests.count)"
                )
            case .failure(let error):
                say("failed \(error.code) \(error.message)")
            }
            done.signal()
        }.resume()
        done.wait()
        return 0
    }

    /// `network-events WAIT_SECONDS|none`: serves on all addresses, prints `server <port>`, then
    /// follows `/sse?count=30&interval_ms=100` with `events(for:)` (idle timeout 1 s, so a lost
    /// link shows within a second) and waitsForConnectivity, printing `event <id>`, `reconnect
    /// <number> <reason code> last-id=<id>`, pause events, then `completed ids=<id,…>
    /// last-event-ids=<header of each request, - for none>` or `failed <code> <message>`.
    static func events(wait: Double?) throws -> Int32 {
        let (server, port, manager) = try serveAndMakeManager(wait: wait)
        var policy = StreamPolicy.default
        policy.idleTimeout = .seconds(1)
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/sse?count=30&interval_ms=100")!)
        let stream = manager.events(for: request, policy: policy)
        let done = DispatchSemaphore(value: 0)
        Task {
            var ids: [String] = []
            do {
                for try await event in stream {
                    ids.append(event.id ?? "-")
                    say("event \(event.id ?? "-")")
                }
                let sent = server.requests.map { $0.header("Last-Event-ID") ?? "-" }
                say("completed ids=\(ids.joined(separator: ",")) last-event-ids=\(sent.joined(separator: ","))")
            } catch let error as CourierError {
                say("failed \(error.code) \(error.message)")
            } catch {
                say("failed \(error)")
            }
            done.signal()
        }
        done.wait()
        return 0
    }

    /// `network-queue DIRECTORY BYTES [slow]`: serves on all addresses, opens a download queue in
    /// DIRECTORY with one item of BYTES bytes from `http://127.0.0.1:<port>`, prints `server
    /// <port>`, every state change (`item queued|completed|failed …`, `item running` once bytes
    /// arrived), and at the end
    /// `done requests=<n> ranges=<n> size=<bytes>`.
    static func queue(directory: String, bytes: Int, slow: Bool) throws -> Int32 {
        exitWhenInputCloses()
        let server = try TestServer(host: "0.0.0.0")
        let port = server.baseURL.port ?? 0
        say("server \(port)")
        let configuration = SessionManager.Configuration()
        // A link that goes away mid-transfer shows as silence: the request timeout notices it.
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = 2
        let manager = SessionManager(configuration: configuration)
        let printedRunning = HostAnswers()
        let queue = try DownloadQueue(directory: URL(fileURLWithPath: directory), manager: manager)
        let done = DispatchSemaphore(value: 0)
        let destination = URL(fileURLWithPath: directory).appendingPathComponent("out.bin")
        _ = queue.addObserver { change in
            switch change.state {
            case .queued: say("item queued")
            case .running(let received, _):
                if received > 0, printedRunning.changed("running", true) { say("item running") }
            case .paused: say("item paused")
            case .cancelled: say("item cancelled")
            case .failed(let failure): say("item failed \(failure.code) \(failure.message)"); done.signal()
            case .completed: say("item completed"); done.signal()
            }
        }
        // Slow: 20 writes 100 ms apart, so a test can cut the link in the middle.
        let query = slow ? "?chunk=\(max(1, bytes / 20))&chunk_delay_ms=100" : ""
        _ = try queue.add(
            DownloadQueue.NewItem(url: URL(string: "http://127.0.0.1:\(port)/bytes/\(bytes)\(query)")!, to: destination, id: "one"))
        say("added")
        done.wait()
        let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? -1
        let ranges = server.requests.filter { $0.header("Range") != nil }.count
        say("done requests=\(server.requests.count) ranges=\(ranges) size=\(size)")
        return 0
    }
}

/// Which answer was printed last for each host.
final class HostAnswers: @unchecked Sendable {  // safe: `answers` is only touched under `lock`
    // Locked with NSLock rather than Mutex, so ThreadSanitizer sees it (Sources/Courier/Support/Locked.swift).
    private let lock = NSLock()
    nonisolated(unsafe) private var answers: [String: Bool] = [:]
    func changed(_ host: String, _ reachable: Bool) -> Bool {
        lock.withLock {
            defer { answers[host] = reachable }
            return answers[host] != reachable
        }
    }
}

/// Prints pause and reconnection events as lines.
struct LineMonitor: EventMonitor {
    func eventStreamWillReconnect(_ event: EventStreamReconnectEvent) {
        NetworkCommands.say(
            "reconnect \(event.reconnection) \(event.reason.map { "\($0.code)" } ?? "end") last-id=\(event.lastEventID ?? "")")
    }
    func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) { NetworkCommands.say("event pause \(event.reason.rawValue)") }
    func taskDidEndPause(_ task: any SessionTask, event: TaskPauseEvent) {
        NetworkCommands.say("event pause-ended \(event.reason.rawValue)")
    }
}
