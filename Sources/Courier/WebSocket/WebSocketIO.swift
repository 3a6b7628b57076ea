import Foundation

/// What only a ``WebSocketDriver``'s queue touches: the byte stream, its reader (the
/// connection's ``WebSocketReadThread``, or a read source), its write source, the keep-alive
/// timer and the read source's buffer.
///
/// `@unchecked Sendable` because it is confined to that serial queue rather than locked: every
/// method runs there (the driver calls them from its queue only), so no two threads ever meet
/// in it. Kept apart from the driver's locked state so that the lock is never held across a
/// system call.
final class WebSocketIO: @unchecked Sendable {
    private(set) var stream: (any WebSocketByteStream)?
    private var readSource: (any DispatchSourceRead)?
    /// The connection's reader thread, when it has one (then there is no read source).
    private var readThread: WebSocketReadThread?
    private var writeSource: (any DispatchSourceWrite)?
    private var keepalive: (any DispatchSourceTimer)?
    private var readPaused = false
    private var writeArmed = false
    /// 64 KiB, reused for every read.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    deinit {
        readThread?.stop()
        buffer.deallocate()
    }

    /// Starts watching `stream`: reading at once (on a thread of its own while the process has
    /// a ``WebSocketReadThread`` slot, with a read source otherwise), writing when there is
    /// something to write.
    func start(stream: any WebSocketByteStream, queue: DispatchQueue, driver: WebSocketDriver) {
        self.stream = stream
        let write = DispatchSource.makeWriteSource(fileDescriptor: stream.descriptor, queue: queue)
        write.setEventHandler { [weak driver] in driver?.flushWrites() }
        // The descriptor is closed only once neither the reader nor the write source uses it.
        let group = DispatchGroup()
        group.enter()
        group.enter()
        write.setCancelHandler { group.leave() }
        group.notify(queue: queue) { stream.close() }
        writeSource = write
        // The write source starts suspended: armed only while bytes wait for room.
        if WebSocketReadThread.reserve(),
            let thread = WebSocketReadThread.start(stream: stream, driver: driver, done: { group.leave() })
        {
            readThread = thread
            return
        }
        let read = DispatchSource.makeReadSource(fileDescriptor: stream.descriptor, queue: queue)
        read.setEventHandler { [weak driver] in driver?.readAvailable() }
        read.setCancelHandler { group.leave() }
        readSource = read
        read.resume()
    }

    /// Whether the connection has a ``WebSocketReadThread`` (rather than a read source).
    var readsOnItsOwnThread: Bool { readThread != nil }

    /// Watches for room to write (`true`) or stops (`false`).
    func setWriteArmed(_ armed: Bool) {
        guard let writeSource, armed != writeArmed else { return }
        writeArmed = armed
        if armed { writeSource.resume() } else { writeSource.suspend() }
    }

    /// Stops (`true`) or restarts reading: TCP back-pressure for a consumer that is behind.
    func setReadPaused(_ paused: Bool) {
        guard let readSource, paused != readPaused else { return }
        readPaused = paused
        if paused { readSource.suspend() } else { readSource.resume() }
    }

    /// The consumer caught up: read again, including what arrived meanwhile.
    func resumeReading(driver: WebSocketDriver) {
        if let readThread {
            readThread.wake()
            return
        }
        guard readPaused else { return }
        setReadPaused(false)
        driver.readAvailable()
    }

    func startKeepalive(every interval: Duration, queue: DispatchQueue, driver: WebSocketDriver) {
        guard keepalive == nil, stream != nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval.dispatchInterval, repeating: interval.dispatchInterval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak driver] in driver?.keepaliveTick() }
        timer.resume()
        keepalive = timer
    }

    /// Stops every source and timer; the stream closes once the sources let go of it.
    func teardown() {
        keepalive?.cancel()
        keepalive = nil
        readThread?.stop()
        readThread = nil
        // A suspended source runs its cancel handler only once resumed.
        if let readSource {
            if readPaused { readSource.resume() }
            readSource.cancel()
        }
        if let writeSource {
            if !writeArmed { writeSource.resume() }
            writeSource.cancel()
        }
        readSource = nil
        writeSource = nil
        readPaused = false
        writeArmed = false
        stream = nil
    }
}
