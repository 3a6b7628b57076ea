import CourierSupport
import XCTest
@testable import Courier

/// ``StopSignals``' rule, its signals and times given as arguments (no signal is sent: the
/// delivery, ``SignalWatcher``, is run by `courier`'s tests, which interrupt the real command).
final class StopSignalsTests: XCTestCase {
    /// What happened, in order.
    private let log = Locked<[String]>([])

    private func stops(supervised: Bool) -> StopSignals {
        let log = self.log
        let stops = StopSignals(supervised: supervised) { signal in log.withLock { $0.append("leave \(signal)") } }
        stops.onStop { log.withLock { $0.append("stop") } }
        stops.beforeLeaving { log.withLock { $0.append("before leaving") } }
        return stops
    }

    func testTheFirstSignalStopsOnceAndASecondRunsBeforeLeavingThenLeaves() {
        // Given a program with a stop action and a last word
        let stops = stops(supervised: false)
        XCTAssertNil(stops.signal)

        // When the first signal comes, then the stop action runs and the signal is remembered
        stops.received(SIGINT, at: 1_000)
        XCTAssertEqual(log.current, ["stop"])
        XCTAssertEqual(stops.signal, SIGINT)
        // When the same one comes again at once, unsupervised, then it is a second request:
        // the last word is said and the program leaves with it
        stops.received(SIGINT, at: 2_000)
        XCTAssertEqual(log.current, ["stop", "before leaving", "leave \(SIGINT)"])
        XCTAssertEqual(stops.signal, SIGINT, "the first signal is the one the program stopped for")
    }

    func testUnderASupervisorTheSameSignalWithinASecondIsItsCopyNotASecondRequest() {
        // Given a supervised child that stopped for SIGTERM
        let stops = stops(supervised: true)
        stops.received(SIGTERM, at: 5_000_000_000)

        // When the same signal comes within a second (the supervisor passing it on), then it is ignored
        stops.received(SIGTERM, at: 5_999_000_000)
        XCTAssertEqual(log.current, ["stop"])
        // When it comes a second later, or another signal comes, then it is a second request
        stops.received(SIGTERM, at: 6_000_000_000)
        XCTAssertEqual(log.current, ["stop", "before leaving", "leave \(SIGTERM)"])
        let other = self.stops(supervised: true)
        other.received(SIGTERM, at: 0)
        other.received(SIGINT, at: 1)
        XCTAssertEqual(log.current.suffix(3), ["stop", "before leaving", "leave \(SIGINT)"])
    }

    func testAStopActionGivenAfterTheSignalRunsAtOnceAndWaitingCancelsTheWork() {
        // Given a signal that came before anything asked what stopping means
        let stops = StopSignals(supervised: false) { _ in XCTFail("one signal only: nobody leaves") }
        stops.received(SIGINT, at: 0)

        // When work is waited for, then the stop cancels it at once and its result comes back
        let result = stops.wait {
            do {
                try await Task.sleep(for: .seconds(30))
                return "finished"
            } catch {
                return "cancelled"
            }
        }
        XCTAssertEqual(result, "cancelled")
        // And an action given now runs at once
        let ran = Locked(false)
        stops.onStop { ran.set(true) }
        XCTAssertTrue(ran.current)
    }
}
