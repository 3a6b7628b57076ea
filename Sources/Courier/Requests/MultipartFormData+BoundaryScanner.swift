import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension MultipartFormData {
    /// Looks for the delimiter in bytes that arrive in chunks, including occurrences that straddle
    /// two chunks, keeping no more than the delimiter's length between calls.
    struct BoundaryScanner {
        private let delimiter: [UInt8]
        /// The last `delimiter.count - 1` bytes seen: where a straddling occurrence would start.
        private var tail: [UInt8] = []

        init(delimiter: [UInt8]) {
            self.delimiter = delimiter
        }

        /// Whether the delimiter ends within `chunk` (it may start in earlier chunks).
        mutating func scan(_ chunk: UnsafeRawBufferPointer) -> Bool {
            let keep = delimiter.count - 1
            if !tail.isEmpty {
                let seam = tail + chunk.prefix(keep)
                if seam.withUnsafeBytes({ Self.occurs(delimiter, in: $0) }) { return true }
            }
            if Self.occurs(delimiter, in: chunk) { return true }
            tail.append(contentsOf: chunk.suffix(keep))
            tail.removeFirst(max(0, tail.count - keep))
            return false
        }

        /// Whether `pattern` occurs in `data`.
        static func occurs(_ pattern: [UInt8], in data: Data) -> Bool {
            data.withUnsafeBytes { occurs(pattern, in: $0) }
        }

        /// Whether `pattern` occurs in `bytes`. `memchr` for the first byte and `memcmp` for the
        /// rest keep the scan at C speed even in debug builds (Swift's Glibc module has no
        /// `memmem`), which matters for the multi-gigabyte parts `write(to:)` is meant for.
        static func occurs(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
            guard let first = pattern.first, let base = bytes.baseAddress, bytes.count >= pattern.count else {
                return false
            }
            return pattern.withUnsafeBytes { needle -> Bool in
                let end = base + bytes.count
                var cursor = base
                while end - cursor >= pattern.count {
                    // Only the positions where a whole occurrence still fits are worth finding.
                    let span = end - cursor - pattern.count + 1
                    guard let hit = memchr(cursor, Int32(first), span) else { return false }
                    if memcmp(hit, needle.baseAddress!, pattern.count) == 0 { return true }
                    cursor = UnsafeRawPointer(hit) + 1
                }
                return false
            }
        }
    }
}
