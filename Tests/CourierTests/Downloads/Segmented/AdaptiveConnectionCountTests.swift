import CourierTestSupport
import XCTest

@testable import Courier

/// Automatic N by AIMD (AdaptiveConnectionCount.swift), with the time and the bytes passed in.
final class AdaptiveConnectionCountTests: XCTestCase {
    private func window(_ bytesPerSecond: Double) -> Throughput { Throughput(bytes: Int64(bytesPerSecond), seconds: 1) }

    /// Feeds one window per second, each at `rate(connections)`, and returns the targets.
    private func run(_ count: inout AdaptiveConnectionCount, from start: Double = 0, windows: Int, rate: (Int) -> Double) -> [Int] {
        (0..<windows).map { index in
            count.observe(window(rate(count.target)), connections: count.target, now: start + Double(index + 1))
        }
    }

    func testItStartsWithOneMultipliesWhileTheTotalRisesThenAddsOneAtATime() {
        // Given a server capping each connection at 10 MB/s, with loopback allowing 42
        var count = AdaptiveConnectionCount(cap: 16)
        XCTAssertEqual(count.target, 1)
        // When
        let targets = run(&count, windows: 6) { min(Double($0) * 10e6, 42e6) }
        // Then it goes to 4 and 16, finds 16 no better than 4 (42 vs 40 is under the 10 % margin) and
        // goes back to 4; one at a time, it finds 5 no better either, and takes it back
        XCTAssertEqual(targets, [4, 16, 4, 5, 4, 4])
    }

    func testItNeverExceedsTheCap() {
        var count = AdaptiveConnectionCount(cap: 3)
        let targets = run(&count, windows: 8) { Double($0) * 10e6 }
        XCTAssertEqual(targets.max(), 3)
        XCTAssertEqual(targets.last, 3)
        count.setCap(2)
        XCTAssertEqual(count.target, 2, "a lower cap applies at once")
    }

    func testAfterAnAdditionThatDidNotPayItProbesAgainLater() {
        // Given a count settled at 2 (a third connection added nothing)
        var count = AdaptiveConnectionCount(cap: 8, configuration: .init(margin: 0.1, hold: 5, probeAfterWindows: 3))
        var targets = run(&count, windows: 5) { min(Double($0) * 10e6, 20e6) }
        XCTAssertEqual(targets, [4, 8, 4, 5, 4], "the step to 8 goes back to 4, then 5 is tried once")
        // When the server then allows more
        targets = run(&count, from: 5, windows: 6) { Double($0) * 10e6 }
        // Then, after the settled windows, it adds again
        XCTAssertEqual(targets, [4, 4, 5, 6, 7, 8])
    }

    func testA429HalvesTheCountAndHoldsIt() {
        // Given sixteen connections (the cap), reached in slow start
        var count = AdaptiveConnectionCount(cap: 16)
        _ = run(&count, windows: 7) { Double($0) * 10e6 }
        XCTAssertEqual(count.target, 16)
        // When a 429 comes at t = 7.5
        XCTAssertEqual(count.backOff(now: 7.5), 8)
        // Then nothing is added during the hold (5 s), then it climbs again, one at a time
        let targets = run(&count, from: 7.5, windows: 7) { Double($0) * 10e6 }
        XCTAssertEqual(targets, [8, 8, 8, 8, 9, 10, 11])
        XCTAssertEqual(count.backOff(now: 20), 5)
        XCTAssertEqual(count.backOff(now: 20.1), 5, "the rest of a burst of refusals does not halve again")
        XCTAssertEqual(count.backOff(now: 20.3), 2)
        XCTAssertEqual(count.backOff(now: 20.6), 1)
        XCTAssertEqual(count.backOff(now: 21), 1, "never below one")
    }

    func testARefusalNeverWantsMoreConnectionsThanWork() {
        // Given a fixed split of eight, of which only two were answered when the refusals came
        var count = AdaptiveConnectionCount(cap: 8, initial: 8)
        XCTAssertEqual(count.target, 8, "a fixed split starts at its count")
        // When the burst of 429s arrives
        XCTAssertEqual(count.backOff(now: 1, working: 2), 2)
        XCTAssertEqual(count.backOff(now: 1.1, working: 3), 2, "the rest of the burst changes nothing")
        // Then a later refusal halves again
        XCTAssertEqual(count.backOff(now: 2, working: 2), 1)
    }

    func testARetryAfterLongerThanTheHoldIsHonoured() {
        var count = AdaptiveConnectionCount(cap: 16)
        _ = run(&count, windows: 3) { Double($0) * 10e6 }
        count.backOff(now: 3, retryAfter: 30)
        let targets = run(&count, from: 3, windows: 30) { Double($0) * 10e6 }
        XCTAssertEqual(targets.prefix(29).allSatisfy { $0 == 8 }, true)
        XCTAssertEqual(targets.last, 9)
    }

    func testWindowsWithFewerConnectionsThanWantedAreIgnored() {
        var count = AdaptiveConnectionCount(cap: 16)
        count.observe(window(10e6), connections: 1, now: 1)
        XCTAssertEqual(count.target, 4)
        XCTAssertEqual(count.observe(window(1e6), connections: 2, now: 2), 4, "two of the four had not started")
        XCTAssertEqual(count.observe(window(40e6), connections: 4, now: 3), 16)
    }

    func testTheSameInputsGiveTheSameTargets() {
        var generator = SplitMix64(seed: 24)
        let rates = (0..<200).map { _ in Double(generator.next() % 100) * 1e6 }
        func replay() -> [Int] {
            var count = AdaptiveConnectionCount(cap: 12)
            return rates.enumerated().map { index, rate in
                if index % 37 == 36 { return count.backOff(now: Double(index)) }
                return count.observe(window(rate), connections: count.target, now: Double(index))
            }
        }
        XCTAssertEqual(replay(), replay())
        XCTAssertLessThanOrEqual(replay().max() ?? 0, 12)
    }

    func testAStepToTheCapIsJudgedLikeItsBaselineAndThenKept() {
        // Given a server pacing each connection in bursts: slow start's short windows read each
        // new connection's first burst (high), the long windows after it the steady rate (lower)
        var count = AdaptiveConnectionCount(cap: 16)
        count.observe(window(66e6), connections: 1, now: 0.06)
        XCTAssertEqual(count.observe(window(120e6), connections: 4, now: 0.12), 16)
        // Then the step to the cap is still judged by a short window, as its baseline was
        XCTAssertTrue(count.isInSlowStart, "the step to the cap is measured as the step before it")
        XCTAssertEqual(count.observe(window(260e6), connections: 16, now: 0.2), 16)
        XCTAssertFalse(count.isInSlowStart, "at the cap, with the step paid, its windows are long")
        // When the long windows read the steady rate, below the bursts' short windows
        let steady = (1...6).map { count.observe(window(63e6), connections: 16, now: 0.2 + Double($0)) }
        // Then it keeps the cap: a long window is never compared with a short one
        XCTAssertEqual(steady, Array(repeating: 16, count: 6))
    }

    func testAStepToTheCapThatDidNotPayGoesBack() {
        var count = AdaptiveConnectionCount(cap: 16)
        count.observe(window(10e6), connections: 1, now: 1)
        count.observe(window(40e6), connections: 4, now: 2)
        XCTAssertEqual(count.observe(window(41e6), connections: 16, now: 3), 4, "sixteen gave no more than four")
        XCTAssertFalse(count.isInSlowStart)
    }

    func testWindowsLastTwiceTheLongestSilenceOfAConnection() {
        // quiet: the longest silence of an answered connection lately, in seconds
        let rows: [(slowStart: Bool, connections: Int, quiet: Double, seconds: Double, why: String)] = [
            (true, 4, 0, 0.03, "slow start: a short window after the last connection's first bytes"),
            (true, 16, 1, 0.03, "slow start ignores silences: its step's window holds every new connection's first burst"),
            (true, 1, 0, 0.06, "the first step's baseline, at one connection, is measured longer than the step"),
            (false, 1, 0, 0.25, "a steady stream: the usual window"),
            (false, 5, 0.1, 0.25, "silences shorter than half the window change nothing"),
            (false, 5, 0.5, 1.0, "nginx limit_rate 4m: 2 MiB every 0.5 s, so two periods"),
            (false, 5, 1.0, 2.0, "nginx limit_rate 1m: 1 MiB every second"),
            (false, 5, 30, 2.0, "a stalled connection does not stretch it past the longest window"),
            (false, 5, -1, 0.25, "a negative silence is none"),
        ]
        for row in rows {
            XCTAssertEqual(
                AdaptiveConnectionCount.windowSeconds(inSlowStart: row.slowStart, quiet: row.quiet, connections: row.connections),
                row.seconds, accuracy: 1e-9, row.why)
        }
    }

    func testARefusalSetsACeilingItNeverProbesAboveAgain() {
        // Given a server that refuses a fifth connection (nginx limit_conn 4), met by the step to 16
        var count = AdaptiveConnectionCount(cap: 16)
        count.observe(window(4e6), connections: 1, now: 0.06)
        count.observe(window(16e6), connections: 4, now: 0.12)
        XCTAssertEqual(count.target, 16)
        // When the burst of refusals answers it, four working
        XCTAssertEqual(count.backOff(now: 0.15, working: 4), 4)
        XCTAssertEqual(count.backOff(now: 0.16, working: 4), 4, "the rest of the burst is the same signal")
        XCTAssertEqual(count.ceiling, 4)
        // Then, long after the hold, however the total rises, it never asks for a fifth: each
        // probe would be one more refusal and one more halving
        let later = run(&count, from: 10, windows: 40) { Double($0) * 4e6 }
        XCTAssertEqual(Set(later), [4])
    }

    func testTheCeilingIsTheMostThatWorkedInTheBurstAndALaterRefusalLowersIt() {
        var count = AdaptiveConnectionCount(cap: 16, initial: 16)
        count.backOff(now: 1, working: 5)
        count.backOff(now: 1.1, working: 6)
        XCTAssertEqual(count.ceiling, 6, "a connection answered during the burst worked too")
        count.backOff(now: 9, working: 3)
        XCTAssertEqual(count.ceiling, 3, "the limit came down")
        let later = run(&count, from: 20, windows: 20) { Double($0) * 4e6 }
        XCTAssertLessThanOrEqual(later.max() ?? .max, 3)
    }
}
