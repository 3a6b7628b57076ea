#if canImport(Glibc)
import Glibc
#endif
import Foundation
internal import CourierSupport

/// A connection's own reader: a thread blocked in `poll` on the socket (and on a pipe that wakes
/// it), which reads, parses and resumes the waiting `receive()` itself.
///
/// Why a thread: with a `DispatchSource`, a reply woke libdispatch's event thread, which handed
/// the handler to a worker thread, which resumed the receiver on Swift's cooperative pool — three
/// wake-ups per message. Here the thread that `poll` wakes is the one that reads: two (Docs/
/// WebSocket.md, "How it runs"). Idle, it sleeps in `poll` with no timeout: no CPU.
///
/// A thread costs a stack and a kernel task per connection, so only the first ``limit``
/// connections of the process get one (``reserve()``); the others read with a dispatch source.
///
/// `@unchecked Sendable`: the pipe's descriptors are set once in `init` and closed in `deinit`
/// (so a `wake()` never writes to a closed or reused descriptor), and the rest is in `control`'s
/// lock.
final class WebSocketReadThread: @unchecked Sendable {
    /// What the thread is asked to do, behind one lock.
    private struct Control {
        var stopRequested = false
    }

    /// How many reader threads a process runs at most at once, and how many run.
    struct Slots {
        var limit = 64
        var used = 0
    }

    /// Shared by every connection of the process.
    static let slots = Locked(Slots())

    /// Takes a slot for a new reader thread; `false` when ``Slots/limit`` run already.
    static func reserve() -> Bool {
        slots.withLock { slots in
            guard slots.used < slots.limit else { return false }
            slots.used += 1
            return true
        }
    }

    private static func release() {
        slots.withLock { $0.used -= 1 }
    }

    /// Each thread's stack: the reader parses frames, checks UTF-8 and inflates (zlib keeps its
    /// window on the heap); 512 KiB leaves room and keeps a thousand connections' stacks small.
    static let stackSize = 512 << 10

    private let control = Locked(Control())
    /// A pipe, both ends non-blocking: a byte written wakes the thread (a change of read mode,
    /// or stop); a full pipe already wakes it, so a write that would block is dropped.
    private let wakeDescriptor: Int32
    private let wakeWriteDescriptor: Int32

    /// `nil` when the system gives no pipe (the caller then reads with a dispatch source).
    private init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptor = ends[0]
        wakeWriteDescriptor = ends[1]
    }

    deinit {
        _ = Glibc.close(wakeDescriptor)
        _ = Glibc.close(wakeWriteDescriptor)
    }

    /// Starts a reader of `stream` for `driver` in a slot taken with ``reserve()`` (given back
    /// when the thread ends); `done` runs on the thread once it no longer touches the stream.
    /// `nil` (and the slot given back) when no pipe could be made.
    static func start(
        stream: any WebSocketByteStream, driver: WebSocketDriver, done: @escaping @Sendable () -> Void
    )
        -> WebSocketReadThread?
    {
        guard let reader = WebSocketReadThread() else {
            release()
            return nil
        }
        // Weak: the thread must not keep a finished connection's driver alive.
        let thread = Thread { [weak driver] in
            reader.run(stream: stream) { [weak driver] in driver }
            release()
            done()
        }
        thread.name = "courier websocket read"
        thread.stackSize = stackSize
        thread.start()
        return reader
    }

    /// The read mode may have changed (the consumer caught up, `resume()`): look again.
    func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWriteDescriptor, &byte, 1)
    }

    /// Ends the thread; it lets go of the stream, then runs its `done`. Idempotent.
    func stop() {
        let first = control.withLock { control -> Bool in
            defer { control.stopRequested = true }
            return !control.stopRequested
        }
        if first { wake() }
    }

    private var stopRequested: Bool { control.withLock { $0.stopRequested } }

    private func run(stream: any WebSocketByteStream, driver: () -> WebSocketDriver?) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        var streamEnded = false
        while !stopRequested {
            // A read pass before every wait, the first included: after a wake the read mode may
            // have changed, and a TLS stream may hold decrypted bytes its descriptor does not show.
            var watchSocket = false
            if !streamEnded {
                // Strong only for this pass: a driver that goes away stops its reader (WebSocketIO's deinit).
                guard let driver = driver() else { return }
                switch driver.readPass(from: stream, into: buffer, reads: .max) {
                case .wouldBlock: watchSocket = true
                case .paused, .more: watchSocket = false
                case .ended: streamEnded = true
                }
            }
            var entries = [
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
                // A negative descriptor is skipped by `poll`: the socket is not watched while
                // reading is paused (TCP then slows the server down) or after its end.
                pollfd(fd: watchSocket ? stream.descriptor : -1, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&entries, 2, -1) < 0, errno != EINTR { return }
            if entries[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while Glibc.read(wakeDescriptor, &drained, drained.count) > 0 {}
            }
        }
    }
}
