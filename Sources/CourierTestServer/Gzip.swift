import Foundation

/// Writes gzip streams without zlib, using only "stored" (uncompressed) deflate blocks.
///
/// Layout: a 10-byte header, then blocks of `[BFINAL|BTYPE=00 byte, LEN (LE16), NLEN (LE16), LEN bytes]`
/// (at most 65,535 bytes each; always at least one block), then CRC-32 (LE32) and ISIZE (length mod 2^32, LE32).
enum Gzip {
    /// Magic, CM=8 (deflate), no flags, MTIME 0, XFL 0, OS 255 (unknown).
    static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
    /// The largest stored block.
    static let maxBlock = 65_535
    /// Bytes of framing per block.
    static let blockOverhead = 5

    /// The number of stored blocks needed for `length` bytes.
    static func blockCount(forLength length: Int) -> Int {
        max(1, (length + maxBlock - 1) / maxBlock)
    }

    /// The total gzip stream size for a payload of `length` bytes.
    static func streamLength(forLength length: Int) -> Int {
        header.count + blockCount(forLength: length) * blockOverhead + length + 8
    }

    /// The 5-byte header of stored block `index` out of `blockCount` for a payload of `length`.
    static func blockHeader(index: Int, blockCount: Int, length: Int) -> [UInt8] {
        let size = UInt16(min(maxBlock, length - index * maxBlock))
        let isFinal: UInt8 = index == blockCount - 1 ? 1 : 0
        return [isFinal, UInt8(size & 0xFF), UInt8(size >> 8), UInt8(~size & 0xFF), UInt8(~size >> 8)]
    }

    /// The 8-byte trailer.
    static func trailer(crc: UInt32, length: Int) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: length)
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) }
            + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> $0) }
    }

    /// A complete gzip stream holding `data`.
    static func compress(_ data: Data) -> Data {
        let blocks = blockCount(forLength: data.count)
        var out = Data(header)
        out.reserveCapacity(streamLength(forLength: data.count))
        for index in 0..<blocks {
            out.append(contentsOf: blockHeader(index: index, blockCount: blocks, length: data.count))
            let start = data.startIndex + index * maxBlock
            out.append(data[start..<min(data.endIndex, start + maxBlock)])
        }
        out.append(contentsOf: trailer(crc: CRC32.checksum(data), length: data.count))
        return out
    }

    /// A gzip stream that inflates to `length` zero bytes, generated piecewise on demand.
    static func zeros(length: Int) -> ResponseBody {
        let blocks = blockCount(forLength: length)
        let total = streamLength(forLength: length)
        let trailerBytes = trailer(crc: CRC32.checksumOfZeros(count: length), length: length)
        let stride = blockOverhead + maxBlock
        return ResponseBody(count: total) { range in
            // Start from zeros (the payload) and paste in whatever framing overlaps the range.
            var piece = Data(count: range.count)
            func paste(_ bytes: [UInt8], at position: Int) {
                let low = max(position, range.lowerBound), high = min(position + bytes.count, range.upperBound)
                guard low < high else { return }
                for offset in low..<high { piece[offset - range.lowerBound] = bytes[offset - position] }
            }
            paste(header, at: 0)
            var block = max(0, (range.lowerBound - header.count) / stride)
            while block < blocks, header.count + block * stride < range.upperBound {
                paste(blockHeader(index: block, blockCount: blocks, length: length), at: header.count + block * stride)
                block += 1
            }
            paste(trailerBytes, at: total - 8)
            return piece
        }
    }
}
