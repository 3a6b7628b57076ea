import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time of processes, from `/proc/<pid>/stat` (Linux), for the fleet's figures: what the
/// workers, the PostgreSQL server and the test process each spend.
enum ProcessCPU {
    /// The `stat` fields after the command name (which may hold spaces): index 0 is field 3 (state).
    private static func fields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    private static func ticks(_ fields: [Substring], _ indices: [Int]) -> Double {
        indices.reduce(0) { $0 + (Double(fields[$1]) ?? 0) } / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// User plus system CPU seconds of `pid` so far (fields 14 and 15); 0 when it is gone.
    static func seconds(of pid: Int32) -> Double {
        fields(pid).map { ticks($0, [11, 12]) } ?? 0
    }

    /// CPU seconds of `root` and its children, live or ended: `root`'s own and its reaped
    /// children's (fields 14–17), plus each live child's own and reaped children's. A server whose
    /// connections are children (PostgreSQL's postmaster and its backends) is counted whole.
    static func seconds(ofTree root: Int32) -> Double {
        var total = fields(root).map { ticks($0, [11, 12, 13, 14]) } ?? 0
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let fields = fields(pid), fields.count > 14, Int32(fields[1]) == root else { continue }
            total += ticks(fields, [11, 12, 13, 14])
        }
        return total
    }

    /// User plus system CPU seconds of this process so far.
    static func ownSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
