import Foundation
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif
import CourierSupport

/// Samples the process's current resident set from a background thread: field 2 of
/// `/proc/self/statm` (resident pages) times the page size. Current, not peak (`VmHWM`), so that
/// what earlier tests left resident does not hide what the code under test adds.
final class ResidentSetSampler: Sendable {
    private struct State {
        var running = false
        var finished = false
        var peak = 0
        var samples = 0
    }

    private let state = Locked(State())

    /// The resident set now, in bytes.
    func currentBytes() -> Int {
        let fields = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "").split(separator: " ")
        let pages = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// Starts sampling every 2 ms.
    func start() {
        let first = currentBytes()
        state.withLock { $0 = State(running: true, finished: false, peak: first, samples: 1) }
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) {
                let now = currentBytes()
                state.withLock {
                    $0.peak = max($0.peak, now)
                    $0.samples += 1
                }
                usleep(2000)
            }
            state.withLock { $0.finished = true }
        }
    }

    /// Stops sampling and returns the highest resident set seen, in bytes.
    func stop() -> Int {
        state.withLock { $0.running = false }
        while !state.withLock({ $0.finished }) { usleep(1000) }
        let last = currentBytes()
        return state.withLock { max($0.peak, last) }
    }

    /// How many samples were taken.
    var sampleCount: Int { state.withLock { $0.samples } }
}
