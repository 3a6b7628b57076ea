/// How many connections a segmented download wants, chosen by additive increase and
/// multiplicative decrease (AIMD). Pure and deterministic: time and byte counts are passed in.
///
/// - It starts at one connection, and multiplies the count by ``Configuration/slowStartFactor``
///   after each measured window (in which all wanted connections ran) while the total throughput
///   rose by at least ``Configuration/margin`` over the window before: a server that caps each
///   connection is found in a few windows, not one connection per window (slow start, as TCP's).
/// - The first step that did not pay is taken back; from then on it adds one at a time while
///   the throughput rises. An addition that did not pay is taken back, and it holds that count;
///   it probes again (adds one) after ``Configuration/probeAfterWindows`` windows.
/// - On 429, 503, a `Retry-After`, or a connection reset it halves (never below one) and holds,
///   adding nothing, for ``Configuration/hold`` seconds or the `Retry-After`, whichever is longer.
///   Refusals within ``Configuration/backOffSpacing`` of a halving extend the hold but do not halve
///   again: the burst that answers one step up is one signal.
/// - A refusal also sets a ``ceiling``: the connections that worked when it came. It never asks
///   for more again in this download: a server with a connection limit (nginx's `limit_conn`, a
///   `max_conns`) refuses every attempt above it, and each probe would cost a refusal and a halving.
/// - It never exceeds ``cap`` (the per-host cap, which counts every connection).
///
/// Its windows are timed by ``windowSeconds(inSlowStart:quiet:)``: a step's window begins when the
/// step is decided and counts every connection's bytes from then on, so the first bytes of the
/// connections that answered first are not lost while the last one is awaited.
struct AdaptiveConnectionCount: Sendable, Equatable {
    struct Configuration: Sendable, Equatable {
        /// How much the total throughput must rise, as a fraction, for an addition to count.
        var margin: Double = 0.10
        /// Seconds to add nothing after a decrease.
        var hold: Double = 5
        /// Windows to wait, after an addition did not pay, before trying one again.
        var probeAfterWindows: Int = 10
        /// Seconds during which further refusals do not halve again: the burst of 429s that
        /// answers one step up is one signal, as TCP halves once per window of losses.
        var backOffSpacing: Double = 0.25
        /// How much slow start multiplies the count by at each step. Four finds a server's
        /// per-connection cap of sixteen in two windows instead of four: each window at too few
        /// connections is time lost.
        var slowStartFactor: Int = 4
        /// Seconds a slow-start window measures after its last wanted connection was answered:
        /// each step is a large change (×4), so a short window tells it apart, and each window at
        /// too few connections is time lost.
        var slowStartWindow: Double = 0.03
        /// Seconds the first window measures, at one connection: the first step's baseline. Longer
        /// than a step's: a server pacing in bursts sends a connection's first burst at once, read
        /// over a short window as a high rate, and the step's window must beat it although it also
        /// holds the time its new connections took to start (tens of milliseconds when loaded).
        var firstWindow: Double = 0.06
        /// Seconds any other window measures, at least, after its last wanted connection was answered.
        var window: Double = 0.25
        /// The longest window, however long the silences between a connection's bursts.
        var longestWindow: Double = 2
    }

    let configuration: Configuration
    /// The most connections allowed, at least one.
    private(set) var cap: Int
    /// The connections wanted now.
    private(set) var target = 1
    /// The throughput measured at `target - 1`, before the last addition; `nil` when the next
    /// window measures a fresh baseline.
    private var baseline: Double?
    /// No addition before this time (after a decrease).
    private var holdUntil = -Double.infinity
    /// Windows left before probing again after an addition that did not pay; `nil` when adding.
    private var settledWindows: Int?
    /// Doubling (until an addition does not pay, or a back-off).
    private var slowStart = true
    /// The target before the last addition, where a doubling that did not pay goes back to.
    private var beforeAddition = 1
    /// When the target was last halved.
    private var lastBackOff = -Double.infinity
    /// The most connections that worked when the server refused one more; `nil` before any refusal.
    private(set) var ceiling: Int?

    /// Starts at one connection under `cap`; a fixed split starts at its own count (`initial`)
    /// and only ever backs off.
    init(cap: Int, initial: Int = 1, configuration: Configuration = Configuration()) {
        self.cap = max(cap, 1)
        self.configuration = configuration
        self.target = min(max(initial, 1), self.cap)
    }

    /// Takes one window's total `throughput`, measured while `connections` connections ran,
    /// ending at `now` (seconds on the download's clock). Returns the new target.
    @discardableResult
    mutating func observe(_ throughput: Throughput, connections: Int, now: Double) -> Int {
        // A window in which not every wanted connection ran says nothing about the target.
        guard let rate = throughput.bytesPerSecond, connections >= target else { return target }
        if now < holdUntil {
            baseline = nil
            return target
        }
        if let windows = settledWindows {
            guard windows <= 1 else {
                settledWindows = windows - 1
                return target
            }
            settledWindows = nil
            baseline = nil
        }
        guard let before = baseline else {
            // The first window at this count: it is the baseline the next addition must beat.
            addOne(measured: rate)
            return target
        }
        if rate >= before * (1 + configuration.margin) {
            addOne(measured: rate)
        } else if slowStart {
            // The doubling overshot: back to the count that measured `before`, then one at a time.
            slowStart = false
            target = beforeAddition
            baseline = nil
        } else {
            // The last addition did not pay: take it back and hold until the next probe.
            target = max(1, target - 1)
            baseline = nil
            settledWindows = configuration.probeAfterWindows
        }
        return target
    }

    /// A 429, a 503, a `Retry-After` (`retryAfter` seconds, when it said) or a connection reset
    /// at `now`, while `working` connections run unrefused: halves the target and holds it, and
    /// never wants more than those that work (a server that refuses the third connection gets
    /// two, not a stream of refused attempts at four). Returns the new target.
    @discardableResult
    mutating func backOff(now: Double, retryAfter: Double? = nil, working: Int? = nil) -> Int {
        let sameBurst = now - lastBackOff < configuration.backOffSpacing
        if !sameBurst {
            target = max(1, target / 2)
            lastBackOff = now
        }
        if let working {
            target = max(1, min(target, working))
            // The refusals of one burst answer one step: the most that worked during it is the
            // limit's measure. A later refusal means the limit came down to what works then.
            let worked = max(1, working)
            ceiling = sameBurst ? max(ceiling ?? worked, worked) : worked
        }
        slowStart = false
        baseline = nil
        settledWindows = nil
        holdUntil = max(holdUntil, now + max(configuration.hold, retryAfter ?? 0))
        return target
    }

    /// Seconds a window must measure after its last wanted connection was answered (received its
    /// first bytes), at `connections` wanted, when the
    /// longest silence of an answered connection (between two of its chunks, or since its last
    /// one) lately was `quiet` seconds. A server that paces each connection in bursts (nginx's
    /// `limit_rate` sends 2 MiB every half second at 4 MiB/s, every second at 1 MiB/s) looks idle
    /// between bursts: a window shorter than two of its periods counts a connection's burst or not
    /// by chance, and an addition that paid looks like one that did not. Slow start's windows stay
    /// short: its step is ×4 and every new connection's first burst falls in its window.
    static func windowSeconds(
        inSlowStart: Bool, quiet: Double, connections: Int = 2, configuration: Configuration = Configuration()
    ) -> Double {
        if inSlowStart { return connections <= 1 ? configuration.firstWindow : configuration.slowStartWindow }
        return min(max(configuration.window, 2 * max(quiet, 0)), max(configuration.longestWindow, configuration.window))
    }

    /// Whether it is still in slow start: its windows can be short. A step that reached the cap
    /// is judged by a slow-start window too: a paced server's first bursts make short windows
    /// read high, and the step's window must be measured as its baseline was.
    var isInSlowStart: Bool { slowStart && (target < cap || baseline != nil) }

    /// A new cap (the per-host cap changed): the target never exceeds it.
    mutating func setCap(_ newCap: Int) {
        cap = max(newCap, 1)
        target = min(target, cap)
    }

    /// Adds one connection when under the cap and the ceiling, with `measured` as the baseline to beat.
    private mutating func addOne(measured: Double) {
        let limit = min(cap, ceiling ?? cap)
        guard target < limit else {
            // Nowhere higher to go: from now on its windows are long, and compared only with one
            // another (a short slow-start window is no baseline for them).
            baseline = nil
            slowStart = false
            return
        }
        beforeAddition = target
        target = slowStart ? min(limit, target * max(2, configuration.slowStartFactor)) : target + 1
        baseline = measured
    }
}
