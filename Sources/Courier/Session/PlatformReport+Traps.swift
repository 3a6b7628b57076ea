extension PlatformReport {
    /// A known way to make FoundationNetworking kill the process (Docs/Platform.md §4 and §7), and
    /// whether it applies to the toolchain Courier was built with.
    ///
    /// This is what was measured, not a fresh probe: provoking a trap would end the process that
    /// asks. `TrapContainmentTests` re-checks the §7 traps on every test run.
    public struct Trap: Sendable, Codable, Equatable {
        /// Whether the trap applies to this toolchain, and how that is known.
        public enum Applicability: String, Sendable, Codable {
            /// Measured on this very toolchain (Swift 6.3.1): it applies.
            case measured
            /// Not measured on this toolchain, but Docs/Platform.md found the code unchanged
            /// across the versions it could read: assume it applies.
            case assumed
            /// Not measured, and a fix is known upstream: it may or may not apply.
            case unknown
        }

        /// Who can set it off.
        public enum Trigger: String, Sendable, Codable {
            /// Any server a request reaches: a response alone kills the process.
            case server
            /// The calling code using URLSession in a particular way; Courier never does.
            case caller
        }

        /// The section of Docs/Platform.md, e.g. `7.1`.
        public var section: String
        /// What sets it off.
        public var summary: String
        /// Who can set it off.
        public var trigger: Trigger
        /// Whether it applies to this toolchain.
        public var applies: Applicability
        /// The toolchain the measurement was made with.
        public var measuredWith: String
        /// What Courier does about it.
        public var courier: String

        /// The toolchain of every measurement in Docs/Platform.md §1.
        static let measurementToolchain = "Swift 6.3.1, libcurl 7.88.1, x86_64"

        /// Every known trap, with ``applies`` for the compiler Courier was built with: measured
        /// on 6.3.1; for an older toolchain assumed (the code is older than the fix, where there
        /// is one); for a newer one assumed where no fix is known, unknown where one is.
        static var known: [Trap] {
            known(fixes: PlatformFixes.status)
        }

        /// ``known``, saying for each server trap whether the platform kit contains it here.
        static func known(fixes: PlatformFixes.Status) -> [Trap] {
            known(
                measuredToolchain: PlatformReport.isMeasuredToolchain, newer: PlatformReport.isNewerThanMeasured,
                headFixed: fixes.isActive(.responseHeadCutShort), lengthFixed: fixes.isActive(.hugeContentLength))
        }

        static func known(measuredToolchain: Bool, newer: Bool, headFixed: Bool = false, lengthFixed: Bool = false) -> [Trap] {
            func applies(fixKnownUpstream: Bool) -> Applicability {
                if measuredToolchain { return .measured }
                return newer && fixKnownUpstream ? .unknown : .assumed
            }
            func trap(_ section: String, _ summary: String, _ trigger: Trigger, fixed: Bool = false, _ courier: String) -> Trap {
                Trap(
                    section: section, summary: summary, trigger: trigger, applies: applies(fixKnownUpstream: fixed),
                    measuredWith: measurementToolchain, courier: courier)
            }
            let kit = "contained in this process: the platform kit makes it an error (PlatformFixes)"
            let noKit =
                "the platform kit is not active: courier get runs transfers in a supervised child and retries; the library cannot contain it (§7.5)"
            return [
                trap(
                    "7.1", "a response head cut short (status line, then FIN): \"Transfer completed, but there's no response.\"",
                    .server, fixed: true, headFixed ? kit : noKit),
                trap(
                    "7.2", "a Content-Length from 2^63 - 512 to 2^63 - 1: Double-to-Int64 conversion in the header callback",
                    .server, lengthFixed ? kit : noKit),
                trap(
                    "4.1", "cancel() racing completion while a URL cache is configured", .caller,
                    "avoided: no URL cache, cancels through SessionCore"),
                trap("4.2", "suspend() and resume() back to back on a running task", .caller, "avoided: never calls suspend()"),
                trap("4.3", "creating a task on an invalidated session", .caller, "avoided: checked on one serial call queue"),
                trap("4.4", "calling the redirect handler twice", .caller, "avoided: called exactly once"),
                trap("4.5", ".useCredential with a nil credential", .caller, "avoided: never answers .useCredential"),
                trap("4.6", "calling the challenge handler twice", .caller, "avoided: answered exactly once"),
                trap("4.7", "task.cancel() inside needNewBodyStream", .caller, "avoided: cancels from the call queue"),
            ]
        }
    }

    /// Whether the compiler is newer than the measured 6.3.1.
    static var isNewerThanMeasured: Bool {
        #if compiler(>=6.3.2)
        return true
        #else
        return false
        #endif
    }
}
