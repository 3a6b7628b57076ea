#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CourierSupport

/// A resource served with validators and Range support (`/bytes`, `/files`).
struct Representation {
    let body: ResponseBody
    let contentType: String
    /// The ETag as sent (quoted, maybe `W/`), if any.
    let etag: String?
    /// The Last-Modified HTTP-date, if any.
    let lastModified: String?
}

/// Ranged routes: `/bytes`, `/files`, `/stream-bytes`.
extension Router {
    /// The fixed Last-Modified of every `/bytes` response.
    static let bytesLastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
    /// The largest generated body (1 TiB): bodies are produced on the fly, this only keeps arithmetic safe.
    static let maxGeneratedSize = 1 << 40

    /// `/bytes/{n}?seed=S`: n deterministic bytes with validators and Range support.
    func bytes(_ request: HTTPRequest, count text: String) throws(RouteError) -> HTTPResponse {
        let count = try integer(text, name: "byte count", in: 0...Self.maxGeneratedSize)
        let seed = try seedParameter(request)
        let representation = Representation(
            body: ResponseBody(count: count) { DeterministicBytes.bytes(in: $0, seed: seed) },
            contentType: "application/octet-stream",
            etag: "\"bytes-\(count)-\(seed)\"",
            lastModified: Self.bytesLastModified
        )
        return serve(representation, for: request, faults: try FaultOptions(request, router: self))
    }

    /// `/stream-bytes/{n}?seed=S&chunk_size=C`: n deterministic bytes, chunked, C bytes per chunk.
    func streamBytes(_ request: HTTPRequest, count text: String) throws(RouteError) -> HTTPResponse {
        let count = try integer(text, name: "byte count", in: 0...Self.maxGeneratedSize)
        let seed = try seedParameter(request)
        let chunkSize = try intParameter(request, "chunk_size", default: 1024, in: 1...(1 << 20))
        let faults = try FaultOptions(request, router: self)
        var response = HTTPResponse(
            status: 200,
            headers: [("Content-Type", "application/octet-stream")],
            body: ResponseBody(count: count) { DeterministicBytes.bytes(in: $0, seed: seed) }
        )
        response.framing = .chunked(chunkSize: chunkSize)
        faults.apply(to: &response, allowLie: false)
        return admitted(response, for: request, faults: faults)
    }

    /// `/files/<name>`: a file added with `addFile`, else a regular file in the root directory.
    func file(_ request: HTTPRequest, name raw: String) throws(RouteError) -> HTTPResponse {
        let name = QueryString.percentDecode(Substring(raw), plusAsSpace: false)
        let notFound = RouteError("Not Found: \(request.path)", status: 404)
        guard Self.isSafeFileName(name) else { throw notFound }
        let faults = try FaultOptions(request, router: self)
        if let stored = core.files.file(named: name) {
            let representation = Representation(
                body: ResponseBody(stored.data),
                contentType: stored.contentType,
                etag: stored.etag,
                lastModified: stored.lastModified.map(HTTPDate.format)
            )
            return serve(representation, for: request, faults: faults)
        }
        guard let representation = rootFile(named: name) else { throw notFound }
        return serve(representation, for: request, faults: faults)
    }

    /// Whether `name` is a plain file name: no separators, no `..`, no leading dot.
    static func isSafeFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.contains("\\") && !name.contains("..")
            && !name.hasPrefix(".") && !name.unicodeScalars.contains { $0.value == 0 }
    }

    /// A regular file (not a symlink) directly inside the root directory.
    private func rootFile(named name: String) -> Representation? {
        guard let root = core.root else { return nil }
        let url = root.appendingPathComponent(name, isDirectory: false)
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            let data = try? Data(contentsOf: url)
        else { return nil }
        let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
        let stamp = String(Int64(info.st_mtim.tv_sec), radix: 16) + String(Int64(info.st_mtim.tv_nsec), radix: 16)
        return Representation(
            body: ResponseBody(data),
            contentType: Self.contentType(forFileName: name),
            etag: "\"\(String(data.count, radix: 16))-\(stamp)\"",
            lastModified: HTTPDate.format(modified)
        )
    }

    /// A Content-Type guessed from a few common extensions.
    static func contentType(forFileName name: String) -> String {
        let types = [
            "txt": "text/plain; charset=utf-8", "html": "text/html; charset=utf-8", "json": "application/json",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "zip": "application/zip",
        ]
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        return types[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    /// Serves a representation with validators, conditional GET, Range/If-Range and faults,
    /// counted in its path's traffic (or refused with 429 under `max_conns`).
    func serve(_ representation: Representation, for request: HTTPRequest, faults: FaultOptions) -> HTTPResponse {
        admitted(answer(representation, for: request, faults: faults), for: request, faults: faults)
    }

    /// Counts `response` in its path's traffic (`PathTraffic`), or, when `max_conns` responses of
    /// the path are already in flight, refuses it as `refuse=` says (by default `429 Too Many
    /// Requests` with `Retry-After: 1` and no body).
    func admitted(_ response: HTTPResponse, for request: HTTPRequest, faults: FaultOptions) -> HTTPResponse {
        guard
            let flow = core.log.admit(
                path: request.path, connectionID: request.connectionID, limit: faults.maxConnections, slowDown: faults.slowDown)
        else {
            switch faults.refusal {
            case .tooManyRequests: return HTTPResponse(status: 429, headers: [("Retry-After", "1")])
            case .unavailable: return HTTPResponse(status: 503, headers: [("Retry-After", "1")])
            case .redirect: return HTTPResponse(status: 302, headers: [("Location", request.path + "?moved=1")])
            case .reset:
                var refusal = HTTPResponse(status: 503, headers: [])
                refusal.delivery.resetBeforeHead = true
                return refusal
            }
        }
        var response = response
        response.delivery.flow = flow
        return response
    }

    /// The answer to `request` for `representation`, before admission.
    private func answer(_ representation: Representation, for request: HTTPRequest, faults: FaultOptions) -> HTTPResponse {
        var etag = faults.noValidators ? nil : representation.etag
        let lastModified = faults.noValidators ? nil : representation.lastModified
        if faults.weakETag, let strong = etag, !strong.hasPrefix("W/") { etag = "W/" + strong }

        var headers: [(name: String, value: String)] = [("Content-Type", representation.contentType)]
        if !faults.ignoreRange { headers.append(("Accept-Ranges", "bytes")) }
        if let etag { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }

        let total = representation.body.count
        let safeMethod = request.method == "GET" || request.method == "HEAD"
        if safeMethod, Self.isNotModified(request, etag: etag, lastModified: lastModified) {
            return HTTPResponse(status: 304, headers: headers.filter { $0.name != "Content-Type" })
        }

        var response = HTTPResponse(status: 200, headers: headers, body: representation.body)
        if safeMethod, !faults.ignoreRange, let range = request.header("Range"),
            Self.ifRangeAllows(request.header("If-Range"), etag: etag, lastModified: lastModified)
        {
            switch RangeRequest.evaluate(range, total: total) {
            case .full:
                break
            case .partial(let asked):
                let bytes = max(0, asked.lowerBound - faults.rangeShift)..<asked.upperBound
                response.status = 206
                response.headers.append(("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(total)"))
                response.body = representation.body.slice(bytes)
            case .unsatisfiable:
                response.status = 416
                response.headers.append(("Content-Range", "bytes */\(total)"))
                response.body = .empty
            }
        }
        if response.status != 416 { faults.apply(to: &response) }
        return response
    }

    /// `If-Range` allows the range when absent, or when it is exactly the current strong ETag or
    /// exactly the Last-Modified date string.
    static func ifRangeAllows(_ ifRange: String?, etag: String?, lastModified: String?) -> Bool {
        guard let ifRange = ifRange.map({ String($0.trimmingWhitespace) }) else { return true }
        if let etag, !etag.hasPrefix("W/"), ifRange == etag { return true }
        if let lastModified, ifRange == lastModified { return true }
        return false
    }

    /// `If-None-Match` (weak comparison, `*` matches) or, without it, `If-Modified-Since`.
    static func isNotModified(_ request: HTTPRequest, etag: String?, lastModified: String?) -> Bool {
        if let ifNoneMatch = request.header("If-None-Match") {
            guard let etag else { return false }
            let opaque = { (tag: Substring) in tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
            return ifNoneMatch.split(separator: ",").contains { candidate in
                let candidate = candidate.trimmingWhitespace
                return candidate == "*" || opaque(candidate) == opaque(Substring(etag))
            }
        }
        if let ifModifiedSince = request.header("If-Modified-Since"), let lastModified,
            let since = HTTPDate.parse(ifModifiedSince), let modified = HTTPDate.parse(lastModified)
        {
            return modified <= since
        }
        return false
    }
}
