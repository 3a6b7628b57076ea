import Foundation

/// The process's CPU time and peak memory so far, from `getrusage(RUSAGE_SELF)`.
struct ResourceUsage {
    /// User + system CPU time, in seconds.
    var cpuSeconds: Double
    /// Peak resident set size (`ru_maxrss`; KiB on Linux).
    var maxRSSKiB: Int

    static func now() -> ResourceUsage { usage(RUSAGE_SELF) }

    /// The same for every child process that has ended and been waited for (`RUSAGE_CHILDREN`):
    /// a difference of two readings is what the children in between cost.
    static func children() -> ResourceUsage { usage(RUSAGE_CHILDREN) }

    private static func usage(_ who: __rusage_who) -> ResourceUsage {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ResourceUsage(
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime), maxRSSKiB: Int(usage.ru_maxrss))
    }
}
