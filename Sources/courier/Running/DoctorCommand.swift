import Foundation
import Courier

/// `courier doctor [URL] [--json]`: prints ``PlatformReport`` — the libcurl this process loaded and
/// its features, the CA file TLS uses, the proxy variables and the proxy for URL, the temporary
/// directory, the known FoundationNetworking traps, Courier's platform fixes — and exits 1 (``ExitCode/failure``) when
/// something a download needs is broken, 0 otherwise. Runs in this process, unsupervised: it
/// makes no transfer, so no server can trap it, and the libcurl it reports is the one a
/// `courier get` child loads too.
struct DoctorCommand {
    struct Options: Equatable, CommonOptions {
        var url: URL?
        var json = false
        /// What is masked in the report: `Redaction.default` plus the names of `--redact-param`
        /// and `--redact-header` (OutputRedaction.swift).
        var redaction = Redaction.default
        /// `get`'s TLS options: the report says which policy they make for the URL (TLSOptions.swift).
        var tls = TLSOptions()
    }

    static let help = """
        usage: courier doctor [<url>] [--json] [--redact-param <name>]… [TLS options]

        Report what this machine's URLSession is made of: the Swift and Courier versions, the
        libcurl FoundationNetworking loaded (version, TLS library, HTTP/2, HTTP/3, WebSockets,
        CONNECT_ONLY streams for Courier's wss://, brotli, zstd), the CA file and directory TLS verifies servers with, the proxy variables
        libcurl honours and, for <url>, the proxy it would use (libcurl's rules: lower-case
        http_proxy only, no_proxy matching), the temporary directory, and which known
        FoundationNetworking traps apply to this toolchain (as measured, Docs/Platform.md), and
        which of Courier's platform fixes are active in this process (COURIER_PLATFORM_FIXES=off
        turns them off), and the network: its interfaces and their kinds, the default routes, and
        whether this machine has a route to <url>'s host.

          --json        Print the report as one JSON object (PlatformReport's Codable form).
          --redact-param <name>
                        Mask this query parameter's value in the URLs shown (repeatable), as
                        token, sig, X-Amz-Signature and the other defaults are; user info is
                        always masked. --redact-header is accepted too, as by get.
          --cacert, --capath, --pinnedpubkey, --cert, --key, --pass, -k
                        get's TLS options: the report says which TLS policy they make for
                        <url> (trust, pins, client certificate, INSECURE when -k), and whether
                        this process can enforce it.

        Exit status: 0 when nothing a download needs is broken; 1 when something is (libcurl not
        loaded, no readable CA certificates, a temporary directory where no file can be created,
        no route to <url>'s host),
        each named on a "problem:" line; 2 for a usage mistake.
        """

    /// `nil` for `--help`. In `get`'s grammar (ArgumentScanner.swift), with `doctor`'s options
    /// from the table (OptionTable.swift) and the other commands' "unknown option" line.
    static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
        let help = "courier doctor --help"
        let scanned = try ArgumentScanner(command: "doctor", .doctor).scan(arguments)
        if scanned.wantsHelp { return nil }
        var options = Options()
        try options.read(scanned, .doctor, help: help, flags: ["--json": \.json]) { _, _ throws(UsageError) in }
        guard scanned.positionals.count <= 1 else {
            throw UsageError(message: "doctor takes one URL, not '\(scanned.positionals[1])' as well", help: help)
        }
        if let argument = scanned.positionals.first {
            guard let url = URL(string: argument), let scheme = url.scheme, !scheme.isEmpty, url.host?.isEmpty == false else {
                throw UsageError(message: "'\(argument)' is not a URL like https://host/path", help: help)
            }
            options.url = url
        }
        options.tls = try options.tls.validated(help: help)
        return options
    }

    let options: Options

    init(_ options: Options) { self.options = options }

    func run() -> Int32 {
        // As in every command that transfers: the report then says what a transfer here gets.
        PlatformFixes.install()
        let report = PlatformReport.current(for: options.url, redaction: options.redaction, tls: options.tls.policies)
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(report) else { return ExitCode.failure }
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            print(report.text(columns: TerminalSize.columns(of: STDOUT_FILENO)), terminator: "")
        }
        return report.isHealthy ? ExitCode.success : ExitCode.failure
    }
}
