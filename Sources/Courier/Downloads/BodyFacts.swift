import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a response head says about its body, for every task that keeps one to disk (a file
/// download, a split download's connections, a `StreamSink`): the parts a range decision reads,
/// whether the body can be proven complete, and the validator to keep for `If-Range`. Pure:
/// a response in, a fact out. It lives with the downloads so that the split crew and the sink use
/// it without reaching into the transfer (Docs/Architecture.md, "Folder dependencies").
enum BodyFacts {
    /// The parts of `http` a range decision reads.
    static func answer(_ http: HTTPURLResponse, contentLength: Int64?) -> RangeContinuation.Answer {
        RangeContinuation.Answer(
            status: http.statusCode, contentRange: http.value(forHTTPHeaderField: "Content-Range"),
            contentLength: contentLength, etag: http.value(forHTTPHeaderField: "ETag"),
            lastModified: http.value(forHTTPHeaderField: "Last-Modified"),
            contentEncoding: http.value(forHTTPHeaderField: "Content-Encoding"))
    }

    /// Why the body `http` announces cannot be proven complete, if it cannot: a content-encoded
    /// body has no length to check (libcurl decodes it, and a stream cut inside the compressed
    /// data ends without an error), nor has one that only the connection closing ends.
    /// A 206 that continues the bytes held proves its own span, but the file's end only with a
    /// complete length (its own, or an earlier response's): `bytes N-M/*` alone cannot say
    /// whether more follows.
    static func unverifiableReason(
        _ http: HTTPURLResponse, contentLength: Int64?, appendsRange: Bool, totalKnown: Bool, method: String
    ) -> String? {
        // No body by definition: nothing to prove.
        if http.statusCode == 204 || http.statusCode == 304 || method == "HEAD" { return nil }
        if isEncoded(http) {
            let encoding = http.value(forHTTPHeaderField: "Content-Encoding") ?? ""
            return "the server sent a \(encoding)-encoded body although identity was asked, so its length cannot be checked"
        }
        if appendsRange {
            return totalKnown ? nil : "no response announced the file's complete length (the 206 says bytes …/*)"
        }
        if contentLength == nil, !isChunked(http) {
            return "the server announced no length (no Content-Length, not chunked): only the connection closing ends the body"
        }
        return nil
    }

    /// Whether `http`'s body is content-encoded (anything but `identity`).
    static func isEncoded(_ http: HTTPURLResponse) -> Bool {
        RangeContinuation.Answer.isEncoded(http.value(forHTTPHeaderField: "Content-Encoding"))
    }

    /// Whether `http`'s body is chunked: its last chunk proves it complete.
    static func isChunked(_ http: HTTPURLResponse) -> Bool {
        (http.value(forHTTPHeaderField: "Transfer-Encoding") ?? "").lowercased().contains("chunked")
    }

    /// A validator that makes `If-Range` safe: a strong ETag, else `Last-Modified`. Nothing when
    /// the body is content-encoded (offsets would count decoded bytes).
    static func strongValidator(of response: HTTPURLResponse) -> String? {
        StrongValidator.of(
            etag: response.value(forHTTPHeaderField: "ETag"), lastModified: response.value(forHTTPHeaderField: "Last-Modified"),
            contentEncoding: response.value(forHTTPHeaderField: "Content-Encoding"))
    }
}
