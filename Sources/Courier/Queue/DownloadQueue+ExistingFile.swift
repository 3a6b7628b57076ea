import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DownloadQueue {
    /// What is at an item's destination before the queue fetches it: the one input of "this file
    /// is already done", which both ``DownloadQueue/reconcile(_:unlisted:replacingExistingFiles:)``
    /// (adopting a file a lost journal record or another tool left) and opening the queue
    /// (recovering a file published just before a crash) decide with ``check(expectedLength:sha256:)``.
    enum ExistingFile: Equatable {
        /// Nothing is there (or a directory, which publishing will report).
        case absent
        /// A regular file: its size, and its SHA-256 (lower-case hex) when one was asked for.
        case file(size: Int64, sha256: String?)
        /// Something else: a symlink, a FIFO, a device. Never read, never taken as the file.
        case other

        /// Looks at `url` without following a link; reads the whole file for its SHA-256 only
        /// when `hashing`. Never called under the queue's lock.
        static func inspect(_ url: URL, hashing: Bool) -> ExistingFile {
            var info = stat()
            guard lstat(url.path, &info) == 0 else { return .absent }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: return .absent
            case S_IFREG: break
            default: return .other
            }
            guard hashing else { return .file(size: Int64(info.st_size), sha256: nil) }
            return .file(size: Int64(info.st_size), sha256: digest(of: url))
        }

        /// The SHA-256 of the regular file at `url`, read in 1 MiB pieces (never all in memory)
        /// through a descriptor opened without following a link; `nil` when it cannot be read.
        private static func digest(of url: URL) -> String? {
            guard let (descriptor, status) = SideFile.openExisting(url, access: O_RDONLY) else { return nil }
            defer { close(descriptor) }
            guard (status.st_mode & S_IFMT) == S_IFREG else { return nil }
            var hasher = SHA256()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { return nil }
                if count == 0 { break }
                buffer.withUnsafeBytes { hasher.update(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
            return SHA256.hexString(hasher.finalize())
        }

        /// What the file proves against an item's expectations.
        enum Verdict: Equatable {
            /// It has the expected SHA-256 (and length, when one is expected): it is the item's file.
            case proven
            /// Nothing contradicts it, but nothing proves it either (no SHA-256 expected).
            case unproven
            /// It is not the item's file, or not a file at all: why, in a few words.
            case wrong(String)
        }

        /// Checks the file against an item's expected length and SHA-256 (lower-case hex).
        func check(expectedLength: Int64?, sha256: String?) -> Verdict {
            guard case .file(let size, let digest) = self else {
                return .wrong(self == .absent ? "is not there" : "is not a regular file")
            }
            if let expectedLength, size != expectedLength {
                return .wrong("holds \(size) bytes, not the \(expectedLength) expected")
            }
            guard let sha256 else { return .unproven }
            return digest == sha256.lowercased() ? .proven : .wrong("does not have the expected SHA-256")
        }
    }
}
