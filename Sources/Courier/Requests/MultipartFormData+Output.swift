import Foundation

extension MultipartFormData {
    /// The encoder's one fixed buffer. Headers and data are copied into it, files and streams are
    /// read straight into its free space, and whenever it fills its bytes go to `drain` (a file
    /// descriptor, or a growing `Data`). This buffer is all the memory encoding a file or stream
    /// part takes, however large the part.
    final class Output {
        private let storage: UnsafeMutableRawBufferPointer
        private var count = 0
        private let drain: (UnsafeRawBufferPointer) throws(CourierError) -> Void

        init(capacity: Int, drain: @escaping (UnsafeRawBufferPointer) throws(CourierError) -> Void) {
            storage = .allocate(byteCount: capacity, alignment: MemoryLayout<UInt64>.alignment)
            // Bound once to bytes, so readers that want `UInt8` pointers (InputStream) may assume it.
            storage.bindMemory(to: UInt8.self)
            self.drain = drain
        }

        deinit {
            storage.deallocate()
        }

        func append(_ data: Data) throws(CourierError) {
            var offset = data.startIndex
            while offset < data.endIndex {
                if count == storage.count { try flush() }
                let length = min(storage.count - count, data.endIndex - offset)
                let space = UnsafeMutableRawBufferPointer(rebasing: storage[count..<count + length])
                data.copyBytes(to: space.assumingMemoryBound(to: UInt8.self), from: offset..<offset + length)
                count += length
                offset += length
            }
        }

        /// Lets `read` put up to `limit` bytes straight into the free space (flushing first when
        /// there is none) and returns the bytes it put there, valid until the next call.
        func fill(
            upTo limit: Int, _ read: (UnsafeMutableRawBufferPointer) throws(CourierError) -> Int
        ) throws(CourierError) -> UnsafeRawBufferPointer {
            if count == storage.count { try flush() }
            let space = UnsafeMutableRawBufferPointer(rebasing: storage[count..<count + min(limit, storage.count - count)])
            let filled = max(0, min(try read(space), space.count))
            count += filled
            return UnsafeRawBufferPointer(rebasing: space[0..<filled])
        }

        /// Hands every buffered byte to `drain`.
        func flush() throws(CourierError) {
            guard count > 0 else { return }
            try drain(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
            count = 0
        }
    }
}
