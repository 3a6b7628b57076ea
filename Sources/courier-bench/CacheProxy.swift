import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer

/// `courier-bench cache-proxy`: a reverse proxy whose only client is one Courier `SessionManager`,
/// so that a test suite written for HTTP caches (http-tests/cache-tests, run by
/// Docs/bench/cache-tests.sh) measures what that manager's response cache does.
///
/// Each connection carries one request (the proxy answers `Connection: close`); its thread waits
/// for Courier's answer and writes it back. The proxy itself keeps nothing: any reuse the suite
/// sees is the manager's.
struct CacheProxy {
    let options: CacheProxyOptions

    /// Request headers never forwarded: hop-by-hop fields (RFC 9110 §7.6.1), `Host` and
    /// `Content-Length` (URLSession writes its own), and `Accept-Encoding` (URLSession negotiates
    /// and inflates by itself, so the body it hands back is never encoded).
    static let droppedRequestHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host",
        "content-length", "expect", "accept-encoding",
    ]
    /// Response headers never passed back: hop-by-hop fields, the framing this proxy writes itself,
    /// and `Content-Encoding` (URLSession has already inflated the body).
    static let droppedResponseHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "trailer", "upgrade", "content-length",
        "content-encoding",
    ]

    /// Serves until the process is killed; returns only when it cannot start.
    func run() throws -> Never {
        let server = try start()
        // Written straight to the descriptor: the script waiting for it reads a pipe, which stdio buffers.
        let line = "cache-proxy listening on http://127.0.0.1:\(server.port) upstream \(options.upstream.absoluteString)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
        while true { sleep(3600) }
    }

    /// Starts serving on a free port of 127.0.0.1; it serves until the server is stopped.
    func start() throws -> ScriptedServer {
        let manager = SessionManager(configuration: try Self.configuration(options))
        return try ScriptedServer(readingBodies: true) { [options] request, _ in
            Self.forward(request, through: manager, options: options)
        }
    }

    /// The manager of a plain HTTP client: nothing added, nothing followed, nothing retried.
    static func configuration(_ options: CacheProxyOptions) throws(BenchUsageError) -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.defaultHeaders = [:]  // the suite's own headers only (a Vary test counts them)
        configuration.redirectPolicy = .refuse  // a 3xx is the answer the suite checks
        configuration.retryPolicy = nil
        // The suite runs 25 tests at once, some with answers the server delays: none waits for a slot.
        configuration.maximumRunningTasksPerHost = 64
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = options.timeout
        configuration.deadline = .milliseconds(Int64(options.timeout * 1000))
        switch options.cache {
        case .none: break
        case .memory: configuration.responseCache = .memory(maximumBytes: options.maximumBytes)
        case .disk(let path):
            do {
                configuration.responseCache = try .disk(directory: URL(fileURLWithPath: path), maximumBytes: options.maximumBytes)
            } catch {
                throw BenchUsageError(message: "--cache \(path): \(error)")
            }
        }
        return configuration
    }

    /// The upstream request for what the proxy received.
    static func upstreamRequest(for received: RecordedRequest, options: CacheProxyOptions) -> URLRequest? {
        var base = options.upstream.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard received.target.hasPrefix("/"), let url = URL(string: base + received.target) else { return nil }
        var request = URLRequest(url: url, timeoutInterval: options.timeout)
        request.httpMethod = received.method
        // Fields the request's own `Connection` names are hop-by-hop too.
        let listed = Set(
            received.headers.filter { $0.name.lowercased() == "connection" }
                .flatMap { $0.value.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        for (name, value) in received.headers {
            let lower = name.lowercased()
            guard !droppedRequestHeaders.contains(lower), !listed.contains(lower) else { continue }
            request.addValue(value, forHTTPHeaderField: name)
        }
        if !received.body.isEmpty { request.httpBody = received.body }
        return request
    }

    /// Sends `received` upstream through `manager`, waits, and returns the reply to write.
    static func forward(
        _ received: RecordedRequest, through manager: SessionManager, options: CacheProxyOptions
    )
        -> ScriptedServer.Reply
    {
        guard let request = upstreamRequest(for: received, options: options) else {
            return failure(status: 400, "the request target \(received.target.debugDescription) is not a path")
        }
        let arrival = Arrival<DataResponse<Data>>()
        // `.dataOrEmpty`: an empty 3xx, 4xx or 5xx is an answer to pass on, not an error.
        manager.dataTask(with: request, serializer: .dataOrEmpty, validation: .none) { arrival.deliver($0) }.resume()
        // Courier's own deadline ends the task first; this one only guards against a lost completion.
        guard let (response, _) = arrival.wait(until: Deadline(seconds: options.timeout + 10)) else {
            return failure(status: 504, "no answer within \(options.timeout) s")
        }
        guard let head = response.response, response.error == nil else {
            return failure(status: 502, response.error.map { "\($0)" } ?? "no response")
        }
        return reply(head, body: response.data ?? Data(), method: received.method)
    }

    /// The bytes of `head` and `body` as this proxy writes them.
    static func reply(_ head: HTTPURLResponse, body: Data, method: String) -> ScriptedServer.Reply {
        let bodiless =
            method.uppercased() == "HEAD" || head.statusCode == 204 || head.statusCode == 304
            || (100..<200).contains(head.statusCode)
        var headers: [(String, String)] = []
        for case let (name as String, value as String) in head.allHeaderFields {
            let lower = name.lowercased()
            if lower == "content-length", bodiless {
                headers.append((name, value))  // a HEAD's or 304's length describes the stored body
            } else if !droppedResponseHeaders.contains(lower) {
                headers.append((name, value))
            }
        }
        if !bodiless { headers.append(("Content-Length", String(body.count))) }
        let reason = HTTPURLResponse.localizedString(forStatusCode: head.statusCode)
        return .response(status: head.statusCode, reason: reason, headers: headers, body: bodiless ? Data() : body)
    }

    /// A reply of the proxy's own for a request it could not forward.
    static func failure(status: Int, _ message: String) -> ScriptedServer.Reply {
        let oneLine = message.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        let body = Data((oneLine + "\n").utf8)
        return .response(
            status: status, reason: status == 400 ? "Bad Request" : "Bad Gateway",
            headers: [("Courier-Error", oneLine), ("Content-Type", "text/plain"), ("Content-Length", String(body.count))],
            body: body)
    }
}
