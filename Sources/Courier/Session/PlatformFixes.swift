import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CCourierPlatformFixes

/// Courier's fixes for FoundationNetworking defects, applied inside this process.
///
/// FoundationNetworking calls libcurl through its own import table. The kit (Courier's C target
/// `CCourierPlatformFixes`) points a few of those imports at wrappers that forward everything
/// unchanged except what the fixes need (Docs/PlatformFixes.md):
///
/// - ``Fix/staleSocketSources`` (Docs/Platform.md §6.16): a transfer that waits — for a
///   delayed head, a slow body, an event stream — no longer keeps a core busy.
/// - ``Fix/responseHeadCutShort`` (§7.1): a response head cut short by the server ends the task
///   with an error instead of killing the process.
/// - ``Fix/hugeContentLength`` (§7.2): a `Content-Length` just below 2^63 is reported as unknown
///   instead of killing the process; Courier refuses the response.
/// - ``Fix/urlHandleLeak`` (§6.17): the libcurl URL handle FoundationNetworking makes to check
///   every transfer's host is released whole instead of leaking its parts (about 50–60 bytes a
///   request).
///
/// Every ``SessionManager`` installs the kit before it makes its URLSession, so a service that
/// uses Courier has it with nothing to add. URLSessions made in the process before the first
/// install keep the stale-source defect (their libcurl callbacks were set already); call
/// ``install()`` first thing in `main` to cover every session, Courier's or not.
///
/// Set the environment variable `COURIER_PLATFORM_FIXES=off` to leave FoundationNetworking as it
/// is (to measure or to rule the kit out); ``status`` then says `disabled`. `courier doctor` and
/// ``PlatformReport/platformFixes`` say what is active in a process — read from the import
/// table, not assumed.
public enum PlatformFixes {
    /// The name of the environment variable that turns the kit off (`off`, `0`, `no` or `false`).
    public static let environmentVariable = "COURIER_PLATFORM_FIXES"

    /// One fix of the kit.
    public enum Fix: String, Sendable, Codable, CaseIterable {
        /// §6.16: sockets keep only the dispatch sources libcurl wants.
        case staleSocketSources
        /// §7.1: a transfer that ends before its response head is complete fails.
        case responseHeadCutShort
        /// §7.2: a length FoundationNetworking cannot convert is reported as unknown.
        case hugeContentLength
        /// §6.17: the URL handle made for every transfer is released whole.
        case urlHandleLeak

        /// The section of Docs/Platform.md that describes the defect.
        public var section: String {
            switch self {
            case .staleSocketSources: "6.16"
            case .responseHeadCutShort: "7.1"
            case .hugeContentLength: "7.2"
            case .urlHandleLeak: "6.17"
            }
        }

        /// What the fix changes, in a line.
        public var summary: String {
            switch self {
            case .staleSocketSources:
                "a waiting transfer no longer spins on a write source libcurl stopped asking for"
            case .responseHeadCutShort:
                "a response head cut short ends the task with an error instead of a trap"
            case .hugeContentLength:
                "a Content-Length from 2^63 - 512 up is reported as unknown instead of a trap"
            case .urlHandleLeak:
                "the URL handle each transfer's host check makes is released whole, not leaked"
            }
        }

        /// The libcurl functions the fix takes over (the kit's bits).
        var functions: UInt32 {
            switch self {
            case .staleSocketSources:
                UInt32(COURIER_WRAP_MULTI_SETOPT | COURIER_WRAP_MULTI_CLEANUP)
            case .responseHeadCutShort:
                UInt32(
                    COURIER_WRAP_EASY_SETOPT | COURIER_WRAP_EASY_CLEANUP
                        | COURIER_WRAP_MULTI_ADD_HANDLE | COURIER_WRAP_MULTI_INFO_READ)
            case .hugeContentLength:
                UInt32(COURIER_WRAP_EASY_GETINFO)
            case .urlHandleLeak:
                UInt32(COURIER_WRAP_URL | COURIER_WRAP_FREE)
            }
        }
    }

    /// Whether the kit is in effect in this process, and why not when it is not.
    public enum State: String, Sendable, Codable {
        /// Installed: ``Status/fixes`` says which fixes are active.
        case active
        /// Turned off with `COURIER_PLATFORM_FIXES`.
        case disabled
        /// Not installed yet: no ``SessionManager`` was made and ``PlatformFixes/install()`` was
        /// not called.
        case notInstalled
        /// Tried and found unable to work here; ``Status/reason`` says why. Nothing was changed.
        case inert
    }

    /// What the kit does in this process.
    public struct Status: Sendable, Codable, Equatable {
        /// Whether it is in effect.
        public var state: State
        /// Why it is not in effect, when it is not.
        public var reason: String?
        /// The file whose libcurl calls go through the kit (FoundationNetworking's shared
        /// library, or the program itself when FoundationNetworking is linked into it).
        public var object: String?
        /// Each fix, whether it is active now, and how often it acted in this process.
        public var fixes: [FixStatus]
        /// Transfers the kit put a ``TLSPolicy`` on in this process (Docs/TLS.md); `nil` when
        /// the kit is not active.
        public var tlsPoliciesApplied: UInt64?
        /// URLSessions bound to their manager's one ``TLSPolicy`` when they were made, so that
        /// their requests carry no private header (Docs/TLS.md); `nil` when the kit is not active.
        public var tlsSessionsBound: UInt64?
        /// Header lines of 2xx responses FoundationNetworking was not given because it does not act
        /// on them (``SessionManager/Configuration/headerDiet``, Docs/Platform.md §6.18); `nil` when
        /// the kit is not active.
        public var headerLinesWithheld: UInt64?
        /// Whether a new TLS connection reuses libcurl's parsed CA store or parses the CA file again
        /// (Docs/TLS.md, "What a connection costs"); `nil` when the kit is not active.
        public var caStore: CAStore?

        /// Whether `fix` is active.
        public func isActive(_ fix: Fix) -> Bool {
            fixes.first { $0.fix == fix }?.isActive ?? false
        }
    }

    /// What a new TLS connection costs in CA certificates, and what the kit does about it.
    ///
    /// libcurl keeps the parsed CA store per URLSession (its multi handle) only when the store
    /// comes from a CA file alone: no CA directory, no in-memory blob. The kit gives a
    /// ``TLSPolicy``'s certificates to libcurl as a sealed in-memory file, and leaves libcurl's
    /// built-in CA directory out where every certificate in it is also in the CA file.
    public struct CAStore: Sendable, Codable, Equatable {
        /// Whether libcurl's CA-store cache can work for transfers that trust the system's authorities.
        public enum Cache: String, Sendable, Codable {
            /// This libcurl has no CA-store cache (before 7.87.0): every connection parses the CA file.
            case unsupported
            /// libcurl has no built-in CA directory: its cache works without the kit.
            case noDirectory
            /// The built-in CA directory holds only certificates of the CA file; the kit leaves it
            /// out, so the cache works (a changed system store reaches new connections within 5 minutes).
            case directoryLeftOut
            /// The built-in CA directory adds certificates (or CRLs) the CA file lacks, or could not
            /// be read whole: it stays, and each new connection parses the system's CA file again.
            case directoryAdds
        }

        /// The state for this process.
        public var cache: Cache
        /// libcurl's built-in CA file, as the kit found it.
        public var file: String?
        /// libcurl's built-in CA directory, as the kit found it.
        public var directory: String?
        /// Transfers started with the built-in directory left out.
        public var directoriesLeftOut: UInt64
        /// Policies whose CA certificates libcurl reads from a sealed in-memory file (the others,
        /// where the system cannot give one, use a blob that is parsed for each connection).
        public var policyFilesInMemory: UInt64
    }

    /// One fix's state in this process.
    public struct FixStatus: Sendable, Codable, Equatable {
        /// The fix.
        public var fix: Fix
        /// Whether its wrappers are in FoundationNetworking's import table right now.
        public var isActive: Bool
        /// How often it acted since it was installed: sockets whose stale sources were removed,
        /// response heads reported as cut short, lengths reported as unknown, URL handles
        /// released whole.
        public var count: UInt64
    }

    /// Installs the kit (once per process; later calls return the current status). Thread-safe.
    ///
    /// Call it before making any URLSession of your own to cover those too; every
    /// ``SessionManager`` calls it.
    @discardableResult
    public static func install() -> Status {
        installOnce()
        return status
    }

    /// Installs the kit unless the environment turned it off, without building a ``Status``: what
    /// every ``SessionManager`` calls.
    static func installOnce() {
        _ = installation
    }

    /// The install itself, run by the first reader (Swift initializes a static once, thread-safely).
    private static let installation: Void = {
        guard !isDisabledByEnvironment else { return }
        let anchor = unsafeBitCast(URLSession.self as AnyClass, to: UnsafeRawPointer.self)
        let all = Fix.allCases.reduce(UInt32(0)) { $0 | $1.functions }
        _ = courier_platform_fixes_install(anchor, all)
    }()

    /// What the kit does in this process now, read from FoundationNetworking's import table.
    public static var status: Status {
        let counters = courier_platform_fixes_counters()
        let wrapped = courier_platform_fixes_wrapped()
        let fixes = Fix.allCases.map { fix in
            let count: UInt64 =
                switch fix {
                case .staleSocketSources: counters.staleSourcesRemoved
                case .responseHeadCutShort: counters.headsCutShort
                case .hugeContentLength: counters.lengthsHidden
                case .urlHandleLeak: counters.urlHandlesReleased
                }
            return FixStatus(fix: fix, isActive: wrapped & fix.functions == fix.functions, count: count)
        }
        let installed = courier_platform_fixes_status()
        if isDisabledByEnvironment && installed == COURIER_FIXES_NOT_INSTALLED {
            return Status(
                state: .disabled, reason: "\(environmentVariable)=\(environmentValue ?? "") in the environment",
                object: nil, fixes: fixes)
        }
        let object = courier_platform_fixes_object().map { String(cString: $0) }
        switch installed {
        case COURIER_FIXES_ACTIVE:
            return Status(
                state: .active, reason: nil, object: object.map { $0.isEmpty ? programPath : $0 }, fixes: fixes,
                tlsPoliciesApplied: counters.tlsPoliciesApplied, tlsSessionsBound: counters.tlsSessionsBound,
                headerLinesWithheld: counters.headerLinesWithheld, caStore: caStore(counters))
        case COURIER_FIXES_NOT_INSTALLED:
            return Status(state: .notInstalled, reason: nil, object: nil, fixes: fixes)
        default:
            return Status(state: .inert, reason: reason(for: installed), object: nil, fixes: fixes)
        }
    }

    /// Whether every certificate in the OpenSSL hash directory `directory` is in `pem` and the
    /// directory holds nothing else OpenSSL would load: the kit's test before it leaves libcurl's
    /// built-in CA directory out (CAStore.c).
    static func pem(_ pem: Data, coversDirectory directory: String) -> Bool {
        pem.withUnsafeBytes { courier_tls_pem_covers_directory($0.baseAddress, $0.count, directory) == 1 }
    }

    /// The kit's CA-store state (found once, the first time it is asked or a transfer starts).
    private static func caStore(_ counters: courier_fixes_counters) -> CAStore {
        let cache: CAStore.Cache =
            switch courier_tls_ca_cache_state() {
            case COURIER_CA_CACHE_NO_DIRECTORY: .noDirectory
            case COURIER_CA_CACHE_DIRECTORY_LEFT_OUT: .directoryLeftOut
            case COURIER_CA_CACHE_DIRECTORY_ADDS: .directoryAdds
            default: .unsupported
            }
        return CAStore(
            cache: cache, file: courier_tls_default_ca_file().map { String(cString: $0) },
            directory: courier_tls_default_ca_directory().map { String(cString: $0) },
            directoriesLeftOut: counters.caDirectoriesLeftOut, policyFilesInMemory: counters.tlsCAFilesInMemory)
    }

    static func reason(for status: courier_fixes_status) -> String {
        switch status {
        case COURIER_FIXES_NO_FOUNDATION_NETWORKING:
            "FoundationNetworking was not found among the loaded objects"
        case COURIER_FIXES_NO_IMPORTS:
            "FoundationNetworking does not import the libcurl functions the fixes need"
        case COURIER_FIXES_NO_LIBCURL:
            "libcurl's entry points were not found in the process"
        case COURIER_FIXES_NOT_WRITABLE:
            "FoundationNetworking's import table could not be made writable"
        case COURIER_FIXES_UNSUPPORTED_ARCHITECTURE:
            "this processor architecture's relocations are not known to the kit (x86_64 and arm64 are)"
        default:
            "unknown (\(status.rawValue))"
        }
    }

    private static let environmentValue = ProcessInfo.processInfo.environment[environmentVariable]

    /// Read once: the kit is installed at most once per process, so a later change could not
    /// take effect anyway.
    static let isDisabledByEnvironment: Bool = {
        guard let value = environmentValue?.lowercased() else { return false }
        return ["off", "0", "no", "false"].contains(value)
    }()

    private static var programPath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
