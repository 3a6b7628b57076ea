import Foundation
import CourierSupport

/// One file served under `/files/<name>`.
struct StoredFile: Sendable {
    let data: Data
    /// The ETag exactly as sent (with quotes, possibly `W/`).
    let etag: String
    let lastModified: Date?
    let contentType: String
}

/// The thread-safe set of files added with ``TestServer/addFile(_:data:etag:lastModified:contentType:)``.
final class FileStore: Sendable {
    private let files = Locked<[String: StoredFile]>([:])

    /// Adds or replaces a file.
    func set(_ name: String, _ file: StoredFile) {
        files.withLock { $0[name] = file }
    }

    /// Removes a file if present.
    func remove(_ name: String) {
        _ = files.withLock { $0.removeValue(forKey: name) }
    }

    /// Looks a file up by name.
    func file(named name: String) -> StoredFile? {
        files.withLock { $0[name] }
    }
}
