import CourierTestSupport
import Foundation

/// An input stream that hands out `data` at most `chunk` bytes per read and, when `failAfter` is
/// set, fails once that many bytes are out (status `.error`, `streamError` EIO). It records
/// "open" and "close" in `events`.
final class ScriptedInputStream: InputStream {
    private let data: Data
    private let chunk: Int
    private let failAfter: Int?
    private let events: Box<String>
    private var offset = 0
    private var status: Stream.Status = .notOpen

    init(_ data: Data, chunk: Int = .max, failAfter: Int? = nil, events: Box<String> = Box()) {
        self.data = Data(data)  // indices from 0
        self.chunk = chunk
        self.failAfter = failAfter
        self.events = events
        super.init(data: Data())
    }

    override func open() {
        status = .open
        events.append("open")
    }

    override func close() {
        status = .closed
        events.append("close")
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { status == .error ? POSIXError(.EIO) : nil }
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        if let failAfter, offset >= failAfter {
            status = .error
            return -1
        }
        let count = min(maxLength, chunk, data.count - offset, (failAfter ?? .max) - offset)
        guard count > 0 else {
            status = .atEnd
            return 0
        }
        data.copyBytes(to: buffer, from: offset..<offset + count)
        offset += count
        return count
    }
}

/// A stream whose reads return -1 while Foundation's own status stays `.open`: asking it for
/// `streamError` then traps on Linux (Docs/Platform.md §6), so only code that checks the status first
/// survives it.
final class SilentlyFailingInputStream: InputStream {
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        -1
    }
}
