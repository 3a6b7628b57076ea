#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// A one-shot "the server is stopping" signal that blocking waits can include in `poll`.
///
/// It is a pipe: `fire()` writes one byte that nobody ever reads, so the read end stays
/// readable forever and every later wait returns at once. That is what makes `/delay`,
/// `/drip`, slow bodies and the accept loop stop promptly.
final class StopSignal: Sendable {
    private let readFD: Int32
    private let writeFD: Int32

    /// Creates the pipe.
    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TestServerError.posix("pipe", errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Non-blocking so a second fire() can never block on a full pipe.
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        _ = close(readFD)
        _ = close(writeFD)
    }

    /// Fires the signal; calling it again is harmless.
    func fire() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Whether `fire()` has been called.
    var isFired: Bool {
        var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
        return Glibc.poll(&fds, 1, 0) > 0
    }

    /// Sleeps for `milliseconds`. Returns `false` if the signal fired first (the caller should bail out).
    func sleep(milliseconds: Int) -> Bool {
        waitReadable(nil, timeoutMilliseconds: milliseconds) == .timedOut
    }

    /// What ended a wait.
    enum WaitResult: Equatable {
        /// The watched descriptor became readable (data, end of stream, or an error).
        case readable
        /// The stop signal fired.
        case stopped
        /// The timeout elapsed.
        case timedOut
    }

    /// Waits until `fd` (if any) is readable, the signal fires, or `timeoutMilliseconds`
    /// elapses (negative: no timeout). Retries after `EINTR` with the remaining time.
    func waitReadable(_ fd: Int32?, timeoutMilliseconds: Int) -> WaitResult {
        let start = DispatchTime.now().uptimeNanoseconds
        while true {
            var remaining = -1
            if timeoutMilliseconds >= 0 {
                let elapsed = Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
                remaining = max(0, timeoutMilliseconds - elapsed)
            }
            var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
            if let fd { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            let rc = Glibc.poll(&fds, nfds_t(fds.count), Int32(clamping: remaining))
            if rc < 0 {
                if errno == EINTR { continue }
                return .stopped
            }
            if rc == 0 { return .timedOut }
            if fds[0].revents != 0 { return .stopped }
            return .readable
        }
    }
}
