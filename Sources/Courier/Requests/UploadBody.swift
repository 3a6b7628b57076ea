import Foundation

/// The body of an upload task.
public enum UploadBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file, read by URLSession as it sends (never loaded whole). A missing or unreadable file
    /// fails the task with ``CourierError/Code-swift.struct/uploadSourceFailed``.
    case file(URL)
    /// A stream made on demand. The factory is called for each attempt (URLSession may ask again
    /// after a redirect, and Courier's resume re-sends the body), so return a fresh stream each
    /// time. `length`, when known, is the upload progress total; the body is sent chunked.
    case stream(length: Int64?, makeStream: @Sendable () throws -> InputStream)
    /// A multipart/form-data body. Up to `memoryThreshold` bytes it is encoded in memory; above
    /// it, streamed into a private temporary file first (so `Content-Length` is sent and a 1 GiB
    /// file part never sits in memory), which is removed when the task ends, on every path.
    /// Encoding happens off the caller's thread, before the first attempt.
    case multipart(MultipartFormData, memoryThreshold: Int64 = 10_000_000)

    /// The number of bytes that will be sent, when it is known up front.
    var expectedLength: Int64? {
        switch self {
        case .data(let data): return Int64(data.count)
        case .file(let url):
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber
            return size.map { $0.int64Value }
        case .stream(let length, _): return length
        case .multipart(let form, _): return try? form.contentLength()
        }
    }
}
