import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Journal {
    /// Test-only: the hook `COURIER_JOURNAL_KILL_AT="<n>:<phase>"`, where the process kills itself
    /// with SIGKILL, so crash tests can stop a child at every write point of the journal instead of
    /// hoping a timer lands there. See "Test hook" in ``Journal``.
    ///
    /// `package`, never public: no service is meant to set it. It stays in the library (rather than
    /// in the test-only `courier-test-hooks`) because the CLI's crash tests must kill the shipped
    /// `courier get -i` itself at these points (QueueCrashTests); Docs/PublicAPI.md lists it.
    package struct KillPoint: Sendable, Equatable {
        /// A point in an append or a compaction.
        enum Phase: String, Sendable, CaseIterable {
            case beforeWrite = "before-write"
            case midWrite = "mid-write"
            case afterWrite = "after-write"
            case afterSync = "after-sync"
            case compactWritten = "compact-written"
            case compactRenamed = "compact-renamed"

            /// Whether the phase counts compactions rather than appends.
            var isCompaction: Bool { self == .compactWritten || self == .compactRenamed }
        }

        /// The environment variable read once at ``Journal/open(directory:)``.
        package static let variable = "COURIER_JOURNAL_KILL_AT"

        /// The 1-based append (or compaction) of the journal at which to die.
        let ordinal: Int
        let phase: Phase

        /// The hook set in the environment, or `nil`. A value that does not parse is an error
        /// rather than ignored: a crash test with a misspelt phase would otherwise pass without
        /// ever crashing.
        static func fromEnvironment() throws(CourierError) -> KillPoint? {
            guard let text = getenv(variable).map({ String(cString: $0) }) else { return nil }
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let ordinal = Int(parts[0]), ordinal > 0, let phase = Phase(rawValue: parts[1]) else {
                let phases = Phase.allCases.map(\.rawValue).joined(separator: ", ")
                throw CourierError(
                    code: .fileSystem, message: "\(variable)=\(text) is not <n>:<phase> with n ≥ 1 and a phase among \(phases)")
            }
            return KillPoint(ordinal: ordinal, phase: phase)
        }

        /// Whether the hook is for `phase` of the append or compaction numbered `ordinal`.
        func matches(_ ordinal: Int, _ phase: Phase) -> Bool {
            self.ordinal == ordinal && self.phase == phase
        }

        /// Dies at once, as a power cut or `kill -9` would stop the process: no cleanup, no flush.
        func fire() {
            kill(getpid(), SIGKILL)
            // SIGKILL cannot be caught; wait for it rather than run on past the point.
            while true { pause() }
        }
    }
}
