import Foundation

/// An in-process HTTP/1.1 server for tests, on plain POSIX sockets.
///
/// It starts serving as soon as it is created and stops on ``stop()`` or when released.
/// Every connection gets its own thread; requests are recorded in ``requests``.
/// The routes are httpbin-style (`/get`, `/status/{code}`, `/bytes/{n}`, …); see `Docs/TestServer.md`.
///
/// ```swift
/// let server = try TestServer()
/// let (data, _) = try await URLSession.shared.data(from: server.url("/bytes/16?seed=7"))
/// XCTAssertEqual(data, TestServer.deterministicBytes(count: 16, seed: 7))
/// ```
public final class TestServer: Sendable {
    /// The port actually bound (useful when `0` asked for an ephemeral one).
    public let port: UInt16
    /// The host the server listens on, as given to the initializer.
    public let host: String

    private let core: ServerCore

    /// Binds `host` (default `127.0.0.1`) on `port` (default `0`, an ephemeral port) and starts serving at once.
    ///
    /// - Parameter root: an optional directory whose regular files are served under `/files/<name>`,
    ///   in addition to files added with ``addFile(_:data:etag:lastModified:contentType:)``.
    /// - Throws: ``TestServerError`` when the address cannot be parsed or the socket cannot be bound.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, root: URL? = nil) throws {
        let core = try ServerCore(host: host, port: port, root: root)
        self.core = core
        self.host = host
        self.port = core.port
        core.start()
    }

    deinit {
        core.stop()
    }

    /// `http://<host>:<port>`, e.g. `http://127.0.0.1:50123`.
    public var baseURL: URL {
        // A bracketed or dotted literal plus a port always forms a valid URL.
        URL(string: "http://\(core.urlHost):\(port)")!
    }

    /// The URL for `pathAndQuery` (e.g. `"/get?x=1"`) on this server.
    ///
    /// Characters not allowed in URLs are percent-encoded; a missing leading `/` is added.
    public func url(_ pathAndQuery: String) -> URL {
        makeURL(authority: "\(core.urlHost):\(port)", pathAndQuery)
    }

    /// The URL for `pathAndQuery` on the same port but another host name, e.g. `"localhost"`,
    /// which gives a second origin for cross-host redirect tests.
    public func url(_ pathAndQuery: String, host: String) -> URL {
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return makeURL(authority: "\(name):\(port)", pathAndQuery)
    }

    private func makeURL(authority: String, _ pathAndQuery: String) -> URL {
        let path = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        if let url = URL(string: "http://\(authority)\(path)") { return url }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.insert(charactersIn: "%#")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        guard let url = URL(string: "http://\(authority)\(encoded)") else {
            preconditionFailure("TestServer.url: cannot form a URL from \(pathAndQuery)")
        }
        return url
    }

    /// A URL for `/signed/bytes/{count}` valid for `seconds` from now: the server answers it like
    /// `/bytes/{count}` until then and with 403 afterwards (a signed URL that expires). `query`
    /// adds `/bytes` parameters (`"seed=3&chunk_delay_ms=5"`).
    public func signedURL(bytes count: Int, query: String = "", validFor seconds: Int) -> URL {
        let path = "/signed/bytes/\(count)"
        let expires = Int(Date().timeIntervalSince1970) + seconds
        let signature = Router.signature(key: core.signingKey, path: path, expires: expires)
        let extra = query.isEmpty ? "" : "&" + query
        return url("\(path)?expires=\(expires)&sig=\(signature)\(extra)")
    }

    /// Issues a new bearer token, `token-1`, `token-2`…: from now on `/authorized/…` accepts it
    /// and no other (the previous one is revoked), as a token endpoint does.
    public func issueToken() -> String {
        core.tokens.issue()
    }

    /// Revokes the current token: `/authorized/…` refuses every request until ``issueToken()``.
    public func revokeToken() {
        core.tokens.revoke()
    }

    /// Every request received so far, in arrival order (a snapshot).
    ///
    /// A request is recorded once its body has been read and before its response is written.
    public var requests: [RecordedRequest] { core.log.snapshot }

    /// What the server served at `path` (e.g. `"/files/big"`, no query): responses in flight and
    /// their peak, the 429s `max_conns` gave, and the body bytes written. Counted since the
    /// server started or the last ``clearRequests()``.
    public func traffic(for path: String) -> PathTraffic {
        core.log.traffic(for: path)
    }

    /// Forgets all recorded requests, and starts every path's ``traffic(for:)`` count afresh
    /// (responses still in flight stay in flight).
    public func clearRequests() {
        core.log.clear()
    }

    /// The number of TCP connections accepted since start.
    public var connectionCount: Int { core.registry.acceptedCount }

    /// TCP connections open now, as a server limiting connections counts them: from `accept`
    /// until the server closes its end, idle keep-alive connections included.
    public var openConnectionCount: Int { core.registry.openCount }

    /// The most TCP connections open at once (``openConnectionCount``) since start or the last
    /// ``resetPeakOpenConnections()``.
    public var peakOpenConnections: Int { core.registry.peakOpenCount }

    /// The most responses in flight at once over every path that ``traffic(for:)`` counts (from
    /// admission until the body is fully written or the client is gone), whichever their
    /// connections: what a server capping concurrent downloads counts, idle keep-alive connections
    /// not included. Since start or the last ``clearRequests()``.
    public var peakResponsesInFlight: Int { core.log.peakInFlight }

    /// Starts ``peakOpenConnections`` afresh from the connections open now.
    public func resetPeakOpenConnections() {
        core.registry.resetPeak()
    }

    /// Serves `data` at `/files/<name>`, replacing a file of the same name.
    ///
    /// - Parameters:
    ///   - name: a plain file name (no `/`, `\`, `..` or leading dot; others are unreachable).
    ///   - etag: the ETag *with* quotes, e.g. `"\"v1\""` or `"W/\"v1\""`; when `nil`, a strong ETag is
    ///     derived from the content (its CRC-32 and length).
    ///   - lastModified: sent as `Last-Modified` when given.
    ///   - contentType: the `Content-Type`.
    public func addFile(
        _ name: String,
        data: Data,
        etag: String? = nil,
        lastModified: Date? = nil,
        contentType: String = "application/octet-stream"
    ) {
        let tag = etag ?? "\"\(String(CRC32.checksum(data), radix: 16))-\(data.count)\""
        core.files.set(name, StoredFile(data: data, etag: tag, lastModified: lastModified, contentType: contentType))
    }

    /// Stops serving `/files/<name>` for a file added with ``addFile(_:data:etag:lastModified:contentType:)``.
    public func removeFile(_ name: String) {
        core.files.remove(name)
    }

    /// Closes the listener and every open connection, waking any handler that is waiting or
    /// writing slowly, and waits briefly for the connection threads to end.
    /// Idempotent; also called when the server is released.
    public func stop() {
        core.stop()
    }

    /// The exact bytes `/bytes/{count}?seed={seed}` serves.
    ///
    /// The stream is splitmix64: byte `i` is byte `i % 8` (little-endian) of the 64-bit output
    /// `mix(seed &+ (i / 8 + 1) &* 0x9E3779B97F4A7C15)`, where
    /// `mix(z) = z1 ^ (z1 >> 31)`, `z1 = (z0 ^ (z0 >> 27)) &* 0x94D049BB133111EB`,
    /// `z0 = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9`. A negative `count` gives empty data.
    public static func deterministicBytes(count: Int, seed: UInt64 = 0) -> Data {
        DeterministicBytes.bytes(in: 0..<max(0, count), seed: seed)
    }
}
