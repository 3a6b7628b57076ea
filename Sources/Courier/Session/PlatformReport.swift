import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What this process's networking stack is made of, and what in it would break a download.
///
/// On Linux, URLSession is FoundationNetworking on top of the system's libcurl, and most
/// surprises come from there: which libcurl was loaded and what it was built with, which CA file
/// it verifies servers against, which proxy variables it reads, and which FoundationNetworking
/// traps apply. The report reads these from the running process (libcurl's own
/// `curl_version_info`, the environment, the file system) rather than from a fresh network probe;
/// ``traps`` states what Docs/Platform.md measured and for which toolchain.
///
/// Make one with ``SessionManager/platformReport(for:)-method`` (or the static
/// ``SessionManager/platformReport(for:)-type.method``, or
/// ``current(for:temporaryDirectory:environment:redaction:tls:)``); `courier doctor` prints it. The value is
/// `Codable`, so a service can log it once at start-up or expose it on a diagnostics endpoint.
/// ``platformFixes`` says what Courier's platform kit changes in this process.
/// Every URL in it (a proxy's, the one asked about) goes through a ``Redaction``, so proxy
/// credentials and secret query parameters are masked; nothing else in it is secret.
public struct PlatformReport: Sendable, Codable, Equatable {
    /// The Swift compiler that built Courier, e.g. `6.3.1` (from `#if compiler(>=…)`, so a newer
    /// compiler than Courier knows reads as e.g. `6.4 or later`).
    public var swiftCompiler: String
    /// ``CourierInfo/version``.
    public var courierVersion: String
    /// The operating system, as Foundation describes it.
    public var operatingSystem: String
    /// The file FoundationNetworking was loaded from, or `nil` where it could not be told (or
    /// there is no FoundationNetworking). swift-corelibs-foundation has no version number of its
    /// own: it ships with the Swift runtime, so its version is the toolchain's.
    public var foundationNetworkingLibrary: String?
    /// The libcurl loaded in this process; `nil` when none was found (then ``problems`` says so).
    public var libcurl: Libcurl?
    /// The CA certificates a TLS transfer verifies servers against.
    public var certificateAuthorities: CertificateAuthorities
    /// The proxy variables libcurl reads, and the proxy it would use for the report's URL.
    public var proxy: ProxyEnvironment
    /// The temporary directory and whether a file can be created in it.
    public var temporaryDirectory: TemporaryDirectory
    /// The known FoundationNetworking traps (Docs/Platform.md §4 and §7) and whether they apply.
    public var traps: [Trap]
    /// Courier's platform kit in this process: whether it is installed, which fixes are active
    /// (read from FoundationNetworking's import table) and what each did so far.
    public var platformFixes: PlatformFixes.Status
    /// The TLS policy the report's URL gets and whether this process can enforce it; `nil`
    /// without a URL.
    public var tlsPolicy: TLSPolicyReport?
    /// Interfaces, default routes and, for the report's URL, whether its host has a route
    /// (PlatformReport+Network.swift); `nil` in a report decoded from an older version.
    public var network: Network?
    /// What a download needs that is broken here; empty when nothing is.
    public var problems: [Problem]

    /// Whether nothing a download needs is broken (``problems`` is empty).
    public var isHealthy: Bool { problems.isEmpty }

    /// Builds the report for this process.
    ///
    /// - Parameters:
    ///   - url: The URL to work out the effective proxy for (libcurl's rules); `nil` leaves
    ///     ``ProxyEnvironment/effective`` `nil`.
    ///   - temporaryDirectory: The directory to check; `nil` means
    ///     `FileManager.default.temporaryDirectory` (which follows `TMPDIR`).
    ///   - environment: The environment to read proxy variables and `TMPDIR` from. libcurl reads
    ///     the process's own, so pass anything else only to ask "what if".
    ///   - redaction: What is masked in the URLs the report holds: `url` and the proxies.
    ///   - tls: The TLS policies to say which applies to `url` (a manager's ``SessionManager/Configuration/tls``).
    public static func current(
        for url: URL? = nil, temporaryDirectory: URL? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment, redaction: Redaction = .default,
        tls: TLSPolicies = TLSPolicies()
    ) -> PlatformReport {
        let libcurl = Libcurl.loaded()
        let fixes = PlatformFixes.status
        let authorities = CertificateAuthorities.resolve(libcurl: libcurl)
        let proxy = ProxyEnvironment(environment: environment, url: url, redaction: redaction)
        let temporary = TemporaryDirectory.check(
            temporaryDirectory ?? FileManager.default.temporaryDirectory,
            fromEnvironment: environment["TMPDIR"].map { !$0.isEmpty } ?? false)
        var problems: [Problem] = []
        if libcurl == nil {
            problems.append(
                Problem(
                    kind: .libcurlNotFound,
                    message: "libcurl is not loaded in this process (curl_version_info not found): URLSession cannot transfer anything"))
        }
        problems += authorities.problems
        if !temporary.isWritable {
            problems.append(
                Problem(
                    kind: .temporaryDirectoryNotWritable,
                    message: "temporary directory \(temporary.path) is not writable: \(temporary.error ?? "unknown error")"))
        }
        let tlsPolicy = url.map { TLSPolicyReport(url: $0, policies: tls, redaction: redaction) }
        if let tlsPolicy, let reason = tlsPolicy.unenforceableReason {
            problems.append(Problem(kind: .tlsPolicyUnenforceable, message: reason))
        }
        let network = Network.current(for: url)
        if let host = network.host, network.hostReachability == "unreachable" {
            problems.append(
                Problem(
                    kind: .networkUnreachable,
                    message:
                        "the network is unreachable: this machine has no route to \(host) (no interface, address or default route leads there)"
                ))
        }
        return PlatformReport(
            swiftCompiler: Self.compilerVersion,
            courierVersion: CourierInfo.version,
            operatingSystem: ProcessInfo.processInfo.operatingSystemVersionString,
            foundationNetworkingLibrary: Self.foundationNetworkingPath(),
            libcurl: libcurl,
            certificateAuthorities: authorities,
            proxy: proxy,
            temporaryDirectory: temporary,
            traps: Trap.known(fixes: fixes),
            platformFixes: fixes,
            tlsPolicy: tlsPolicy,
            network: network,
            problems: problems)
    }

    /// The compiler version, known at compile time only; the chain stops at what Courier has
    /// seen, so a newer compiler reports "or later" instead of a guess.
    static var compilerVersion: String {
        #if compiler(>=6.4)
        return "6.4 or later"
        #elseif compiler(>=6.3.2)
        return "6.3.2 or later 6.3"
        #elseif compiler(>=6.3.1)
        return "6.3.1"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #elseif compiler(>=6.1)
        return "6.1"
        #else
        return "6.0"
        #endif
    }

    /// Whether this is the toolchain Docs/Platform.md measured (6.3.1): its FoundationNetworking
    /// is the one built with Courier unless the runtime was swapped underneath.
    static var isMeasuredToolchain: Bool {
        #if compiler(>=6.3.1) && !compiler(>=6.3.2)
        return true
        #else
        return false
        #endif
    }

    /// The library URLSession's class metadata lives in: FoundationNetworking's `.so`, or the
    /// executable when the runtime was linked statically.
    static func foundationNetworkingPath() -> String? {
        #if canImport(FoundationNetworking) && canImport(Glibc)
        let metadata = unsafeBitCast(URLSession.self as AnyClass, to: UnsafeRawPointer.self)
        return DynamicLibrary.path(containing: metadata)
        #else
        return nil
        #endif
    }
}

extension PlatformReport {
    /// Something a download needs that is broken here.
    public struct Problem: Sendable, Codable, Equatable {
        /// What kind of thing is broken.
        public enum Kind: String, Sendable, Codable {
            /// No libcurl in the process: FoundationNetworking cannot transfer anything.
            case libcurlNotFound
            /// No CA file or directory for TLS verification, or the one in use cannot be read:
            /// every HTTPS transfer would fail (libcurl error 77).
            case certificateAuthoritiesMissing
            /// No file can be created in the temporary directory (side files, multipart bodies,
            /// FoundationNetworking's own download tasks).
            case temporaryDirectoryNotWritable
            /// A ``TLSPolicy`` applies to the report's URL and cannot be enforced here: a request
            /// to it would fail before it is sent (Docs/TLS.md).
            case tlsPolicyUnenforceable
            /// This machine has no route to the report's URL's host (the network, not the server).
            case networkUnreachable
        }

        /// What kind of thing is broken.
        public var kind: Kind
        /// One line saying what is wrong, naming the path or variable involved.
        public var message: String

        /// A problem of `kind`, described by `message`.
        init(kind: Kind, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// The temporary directory and whether it works.
    public struct TemporaryDirectory: Sendable, Codable, Equatable {
        /// Its path.
        public var path: String
        /// Whether the path came from `TMPDIR` (otherwise Foundation's default or the manager's
        /// configured directory).
        public var fromEnvironment: Bool
        /// Whether a file could be created (and removed) in it.
        public var isWritable: Bool
        /// Why not, when it is not writable.
        public var error: String?

        /// Creates and removes a file in `directory`: the only honest test of "writable" (a
        /// permission check says nothing about a read-only mount, a full disk or a path that is a
        /// regular file).
        static func check(_ directory: URL, fromEnvironment: Bool) -> TemporaryDirectory {
            let path = directory.path
            var template = Array((directory.appendingPathComponent(".courier-doctor-XXXXXX").path).utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                return TemporaryDirectory(path: path, fromEnvironment: fromEnvironment, isWritable: false, error: reason)
            }
            close(descriptor)
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            return TemporaryDirectory(path: path, fromEnvironment: fromEnvironment, isWritable: true, error: nil)
        }
    }
}

extension SessionManager {
    /// A report on this process's networking stack, with the manager's own temporary directory
    /// (``Configuration/temporaryDirectory`` when set).
    ///
    /// - Parameter url: The URL to work out the effective proxy for; `nil` for none.
    public func platformReport(for url: URL? = nil) -> PlatformReport {
        PlatformReport.current(for: url, temporaryDirectory: temporaryDirectory, tls: configuration.tls)
    }

    /// A report on this process's networking stack, with `FileManager.default.temporaryDirectory`.
    ///
    /// - Parameter url: The URL to work out the effective proxy for; `nil` for none.
    public static func platformReport(for url: URL? = nil) -> PlatformReport {
        PlatformReport.current(for: url)
    }
}
