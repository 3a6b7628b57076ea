import Foundation
internal import CCourierPlatformFixes

extension CurlByteStream {
    /// Connects to `url`'s host and port with libcurl and returns the connection as a byte stream.
    ///
    /// `wss` (and `https`) get a TLS connection with the policy `tls` gives the URL — custom CAs,
    /// pins, client certificate, verification — exactly as an HTTP request to the same host and
    /// port would; `ws` (and `http`) a plain one. ALPN offers only `http/1.1`. A proxy in the
    /// environment (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`, as libcurl reads them) is
    /// tunnelled through with `CONNECT`. `timeout` bounds the connect phase (TCP, proxy, TLS; 0 or
    /// less: libcurl's default, 300 s). libcurl's connect blocks, so it runs on a thread of its
    /// own; cancelling the calling task ends it.
    static func open(url: URL, tls: TLSEnforcer?, timeout: TimeInterval) async throws(CourierError) -> CurlByteStream {
        let target = try connectURL(for: url)
        if let reason = unavailableReason {
            throw CourierError(code: .invalidRequest, message: "\(url.scheme ?? "wss"):// cannot be opened here: \(reason)", url: url)
        }
        // The policy is found (and refused when it cannot be enforced) before anything is sent.
        let token = try tls?.token(for: target)
        let context =
            target.scheme == "https" ? TLSContext(host: TLSContext.hostAndPort(target), policy: tls?.policies.policy(for: target)) : nil
        guard let created = courier_stream_new() else {
            throw CourierError(code: .network, message: "libcurl could not make a handle for the connection", url: url)
        }
        let pending = PendingStream(created)
        let milliseconds = timeout > 0 && timeout.isFinite ? max(1, Int(min(timeout, 86_400) * 1000)) : 0
        let code: Int32 = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                // curl_easy_perform blocks for the whole connect: a thread of its own, never one of
                // the cooperative pool's.
                let thread = Thread {
                    let code = target.absoluteString.withCString { targetText in
                        withOptionalCString(token) { tokenText in
                            var options = courier_stream_options(
                                url: targetText, connectTimeoutMilliseconds: milliseconds, tlsToken: tokenText)
                            return courier_stream_connect(pending.stream, &options)
                        }
                    }
                    continuation.resume(returning: code)
                }
                thread.name = "Courier wss connect"
                thread.start()
            }
        } onCancel: {
            courier_stream_cancel(pending.stream)
        }
        guard code == COURIER_STREAM_OK else {
            let text = String(cString: courier_stream_error(pending.stream))
            courier_stream_free(pending.stream)
            throw error(curlCode: code, text: text, url: url, tls: context)
        }
        if Task.isCancelled {
            // Cancelled as the connect finished: the caller no longer wants the connection.
            courier_stream_free(pending.stream)
            throw CourierError.cancelled(url: url)
        }
        let descriptor = courier_stream_socket(pending.stream)
        guard descriptor >= 0 else {
            courier_stream_free(pending.stream)
            throw CourierError(code: .network, message: "libcurl connected but gave no socket (CURLINFO_ACTIVESOCKET)", url: url)
        }
        return CurlByteStream(stream: pending.stream, descriptor: descriptor, url: url, tls: context)
    }

    /// The URL libcurl connects to for a WebSocket URL: `wss` → `https`, `ws` → `http` (libcurl
    /// 7.88 knows no `ws` scheme), path, query and fragment dropped (only the host and port are
    /// used); `https` and `http` are taken as they are, as `URLSession` does. Anything else, or no
    /// host, is ``CourierError/Code-swift.struct/invalidRequest``. Pure.
    static func connectURL(for url: URL) throws(CourierError) -> URL {
        var components = URLComponents()
        switch url.scheme?.lowercased() {
        case "wss", "https": components.scheme = "https"
        case "ws", "http": components.scheme = "http"
        default:
            throw CourierError(code: .invalidRequest, message: "a WebSocket URL must be ws:// or wss://", url: url)
        }
        guard let host = url.host, !host.isEmpty else {
            throw CourierError(code: .invalidRequest, message: "a WebSocket URL needs a host", url: url)
        }
        // URL.host gives an IPv6 literal without its brackets; URLComponents wants them for it.
        components.percentEncodedHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        components.port = url.port
        components.path = "/"
        guard let target = components.url else {
            throw CourierError(code: .invalidRequest, message: "the WebSocket URL's host cannot be given to libcurl", url: url)
        }
        return target
    }

    /// How often a TLS connect parsed its CA file and how often it took the store an earlier
    /// connect parsed (ByteStream.c, StreamCAStore.c), since the process started.
    static var caStoreCounts: (parsed: UInt64, reused: UInt64) {
        let counts = courier_stream_ca_store_counts()
        return (counts.parsed, counts.reused)
    }

    /// Why this process cannot open a stream (libcurl lacks a function it needs), or `nil`.
    static var unavailableReason: String? {
        missingFunctions(found: functionsFound).map { "the system libcurl lacks \($0.joined(separator: ", "))" }
    }

    /// The COURIER_STREAM_ bits of the functions the loaded libcurl has (looked up once).
    static var functionsFound: UInt32 { UInt32(courier_stream_functions()) }

    /// The libcurl functions a stream needs that `found` (COURIER_STREAM_ bits) lacks, or `nil`. Pure.
    static func missingFunctions(found: UInt32) -> [String]? {
        let missing = functionNames.filter { found & $0.bit == 0 }.map(\.name)
        return missing.isEmpty ? nil : missing
    }

    /// The functions by their COURIER_STREAM_ bits.
    static let functionNames: [(bit: UInt32, name: String)] = [
        (UInt32(COURIER_STREAM_EASY_INIT), "curl_easy_init"), (UInt32(COURIER_STREAM_EASY_SETOPT), "curl_easy_setopt"),
        (UInt32(COURIER_STREAM_EASY_GETINFO), "curl_easy_getinfo"), (UInt32(COURIER_STREAM_EASY_PERFORM), "curl_easy_perform"),
        (UInt32(COURIER_STREAM_EASY_RECV), "curl_easy_recv"), (UInt32(COURIER_STREAM_EASY_SEND), "curl_easy_send"),
        (UInt32(COURIER_STREAM_EASY_CLEANUP), "curl_easy_cleanup"),
    ]
}

/// The C stream while it connects, handed to the connecting thread and the cancellation handler.
// @unchecked: a raw pointer is not Sendable. The connecting thread is the only one using the
// handle until the continuation resumes; the cancellation handler only makes an atomic store
// (courier_stream_cancel); the stream is freed after the connect returned.
private final class PendingStream: @unchecked Sendable {
    let stream: OpaquePointer
    init(_ stream: OpaquePointer) { self.stream = stream }
}

private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
