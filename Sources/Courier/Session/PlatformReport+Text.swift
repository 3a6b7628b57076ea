import Foundation

/// The report's text form, as `courier doctor` prints it (Docs/Observability.md, "Platform report").
extension PlatformReport {
    private typealias TextSection = (title: String, rows: [(key: String, value: String)])

    /// The report as people read it (`courier doctor` prints it): aligned `key  value` lines under
    /// section titles, values wrapped at word boundaries to `columns`, continuation lines indented
    /// to the value column. Control characters become `?` (``ProgressFormat/displayable(_:)``): a
    /// value comes from the environment (`TMPDIR`, a proxy variable) or a file name, and a line
    /// break in one would otherwise print a line of its own — a forged `problem:` line.
    public func text(columns: Int = 80) -> String {
        let sections = Self.sections(self).map { section in
            (
                title: section.title,
                rows: section.rows.map {
                    (key: ProgressFormat.displayable($0.key), value: ProgressFormat.displayable($0.value))
                }
            )
        }
        let keyWidth = sections.flatMap { $0.rows.map(\.key.count) }.max() ?? 0
        let indent = 2 + keyWidth + 2
        var text = ""
        for section in sections {
            text += section.title + "\n"
            for row in section.rows {
                let lines = Self.wrap(row.value, width: max(20, columns - indent))
                let padding = String(repeating: " ", count: keyWidth - row.key.count)
                text += "  \(row.key)\(padding)  \(lines.first ?? "")\n"
                for line in lines.dropFirst() { text += String(repeating: " ", count: indent) + line + "\n" }
            }
        }
        return text
    }

    /// `text` in lines of at most `width` characters, broken at spaces (a longer word keeps a line
    /// of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = String(word)
            } else {
                line += (line.isEmpty ? "" : " ") + word
            }
        }
        lines.append(line)
        return lines
    }

    private static func yes(_ flag: Bool, _ detail: String? = nil) -> String {
        (flag ? "yes" : "no") + (detail.map { " (\($0))" } ?? "")
    }

    /// Whether Courier's wss:// can run on this libcurl (Docs/WebSocket.md, "wss:// on the system libcurl").
    private static func connectOnlyRow(_ curl: PlatformReport.Libcurl) -> String {
        guard let missing = curl.missingStreamFunctions else { return "not looked up" }
        if missing.isEmpty { return "yes (Courier's wss:// runs over libcurl's connection: curl_easy_recv, curl_easy_send)" }
        return "no (lacks \(missing.joined(separator: ", ")): Courier's wss:// cannot work)"
    }

    private static func sections(_ report: PlatformReport) -> [TextSection] {
        var sections: [TextSection] = [
            (
                "Toolchain",
                [
                    ("swift", report.swiftCompiler + " (the compiler that built courier)"),
                    ("courier", report.courierVersion),
                    ("FoundationNetworking", report.foundationNetworkingLibrary ?? "not found"),
                    ("system", report.operatingSystem),
                ]
            )
        ]
        if let curl = report.libcurl {
            sections.append(
                (
                    "libcurl (loaded by FoundationNetworking)",
                    [
                        ("version", "\(curl.version) (\(curl.host), curl_version_info age \(curl.age))"),
                        ("loaded from", curl.path ?? "unknown"),
                        ("TLS", curl.sslVersion ?? "none: no HTTPS"),
                        ("HTTP/2", yes(curl.supportsHTTP2, curl.nghttp2Version.map { "nghttp2 \($0)" })),
                        ("HTTP/3", yes(curl.supportsHTTP3, curl.quicVersion)),
                        (
                            "WebSockets",
                            yes(
                                curl.supportsWebSockets,
                                curl.supportsWebSockets ? nil : "no ws/wss protocol: URLSessionWebSocketTask cannot work")
                        ),
                        ("CONNECT_ONLY", connectOnlyRow(curl)),
                        ("gzip/deflate", yes(curl.supportsLibz, curl.libzVersion.map { "zlib \($0)" })),
                        ("brotli", yes(curl.supportsBrotli, curl.brotliVersion)),
                        ("zstd", yes(curl.supportsZstd, curl.zstdVersion)),
                        ("features", curl.features.joined(separator: " ")),
                        ("protocols", curl.protocols.joined(separator: " ")),
                    ]
                ))
        } else {
            sections.append(("libcurl", [("version", "not loaded in this process")]))
        }
        let authorities = report.certificateAuthorities
        var caRows: [(key: String, value: String)] = []
        if let file = authorities.file {
            let origin = authorities.source == .libcurlDefault ? "libcurl's built-in default" : "FoundationNetworking's fallback list"
            caRows.append(("file", "\(file.path) (\(origin); \(describe(file)))"))
        } else {
            caRows.append(("file", "none"))
        }
        if let directory = authorities.directory {
            caRows.append(("directory", "\(directory.path) (libcurl's built-in default; \(describe(directory)))"))
        } else {
            caRows.append(("directory", "none"))
        }
        let present = authorities.fallbackFiles.filter(\.exists).map(\.path)
        caRows.append(
            ("usual places", present.isEmpty ? "none of \(authorities.fallbackFiles.count) exist" : present.joined(separator: " ")))
        sections.append(("CA certificates", caRows))

        var proxyRows: [(key: String, value: String)] = report.proxy.variables.map { ($0.name, "\($0.value) (\($0.note))") }
        if proxyRows.isEmpty { proxyRows.append(("variables", "none set: direct connections")) }
        if let decision = report.proxy.effective {
            let value: String
            if let proxy = decision.proxy {
                value = "\(proxy) (from \(decision.proxyVariable ?? "?"))"
            } else if let entry = decision.bypassedBy {
                value = "direct (\(decision.noProxyVariable ?? "no_proxy") entry \"\(entry)\")"
            } else {
                value = "direct (no proxy variable for its scheme)"
            }
            proxyRows.append(("for the URL", "\(decision.url) → \(value)"))
        }
        sections.append(("Proxy (libcurl's environment rules)", proxyRows))

        let temporary = report.temporaryDirectory
        sections.append(
            (
                "Temporary directory",
                [
                    ("path", temporary.path + (temporary.fromEnvironment ? " (from TMPDIR)" : "")),
                    ("writable", temporary.isWritable ? "yes" : "no (\(temporary.error ?? "unknown error"))"),
                ]
            ))

        var trapRows: [(key: String, value: String)] = []
        if let first = report.traps.first {
            trapRows.append(("measured with", "\(first.measuredWith) (built with \(report.swiftCompiler))"))
        }
        for trap in report.traps {
            let applies: String
            switch trap.applies {
            case .measured: applies = "applies: yes"
            case .assumed: applies = "applies: assumed (not measured on this toolchain)"
            case .unknown: applies = "applies: unknown (fixed upstream; not measured on this toolchain)"
            }
            let who = trap.trigger == .server ? "any server" : "caller misuse"
            trapRows.append(("§" + trap.section, "\(applies) · \(who) · \(trap.summary) · Courier: \(trap.courier)"))
        }
        sections.append(("Known FoundationNetworking traps (Docs/Platform.md)", trapRows))
        sections.append(("Platform fixes (Courier's kit, Docs/PlatformFixes.md)", fixRows(report.platformFixes)))
        if let tls = report.tlsPolicy {
            sections.append(("TLS policy (Docs/TLS.md)", tlsRows(tls)))
        }

        if let network = report.network {
            var rows: [(key: String, value: String)] = [
                ("status", network.status + (network.unknownReason.map { " (\($0))" } ?? ""))
            ]
            rows += network.interfaces.map { ("interface", $0) }
            rows += (network.defaultRoutes.isEmpty ? ["none"] : network.defaultRoutes).map { ("default route", $0) }
            if let host = network.host { rows.append(("route to \(host)", network.hostReachability ?? "unknown")) }
            sections.append(("Network (the kernel's tables, Docs/Reachability.md)", rows))
        }

        sections.append(
            (
                "Problems",
                report.problems.isEmpty
                    ? [("none", "nothing a download needs is broken")]
                    : report.problems.map { ("problem:", $0.message) }
            ))
        return sections
    }

    /// The kit's state, then one row per fix: active or not, and what it did in this process.
    private static func fixRows(_ status: PlatformFixes.Status) -> [(key: String, value: String)] {
        var rows: [(key: String, value: String)]
        switch status.state {
        case .active: rows = [("state", "active in \(status.object ?? "FoundationNetworking")")]
        case .disabled: rows = [("state", "disabled (\(status.reason ?? PlatformFixes.environmentVariable))")]
        case .notInstalled: rows = [("state", "not installed in this process")]
        case .inert: rows = [("state", "inert: \(status.reason ?? "unknown reason"); nothing was changed")]
        }
        for fix in status.fixes {
            let acted =
                switch fix.fix {
                case .staleSocketSources: "stale sources removed"
                case .responseHeadCutShort: "heads cut short reported"
                case .hugeContentLength: "lengths reported as unknown"
                case .urlHandleLeak: "URL handles released whole"
                }
            let state = fix.isActive ? "active · \(fix.count) \(acted) so far" : "not active"
            rows.append(("§" + fix.fix.section, "\(state) · \(fix.fix.summary)"))
        }
        if let applied = status.tlsPoliciesApplied {
            let bound = status.tlsSessionsBound.map { " · \($0) sessions bound to their manager's one policy (no header)" } ?? ""
            rows.append(("TLS policies", "put on \(applied) transfers so far\(bound) · trust, pins and client certificates (Docs/TLS.md)"))
        }
        if let withheld = status.headerLinesWithheld {
            rows.append(
                ("§6.18", "\(withheld) header lines withheld so far · FoundationNetworking gets only the lines of a 2xx head it acts on"))
        }
        if status.state == .active {
            rows.append(
                ("§6.19", "active · a proxy's answer to CONNECT is kept from FoundationNetworking, which took it for the server's response")
            )
        }
        if let store = status.caStore { rows.append(("CA store", caStoreRow(store))) }
        return rows
    }

    /// Whether new TLS connections reuse libcurl's parsed CA store (Docs/TLS.md, "What a connection costs").
    private static func caStoreRow(_ store: PlatformFixes.CAStore) -> String {
        let directory = store.directory ?? "the CA directory"
        let file = store.file ?? "the CA file"
        let state =
            switch store.cache {
            case .directoryLeftOut:
                "parsed once per session: \(directory) holds only certificates of \(file), so the kit leaves it out "
                    + "(\(store.directoriesLeftOut) transfers so far)"
            case .noDirectory: "parsed once per session (libcurl has no built-in CA directory)"
            case .directoryAdds: "parsed for every new connection: \(directory) has certificates \(file) lacks, so it stays"
            case .unsupported: "parsed for every new connection: this libcurl has no CA-store cache (7.87.0 and later)"
            }
        return state + " · policy CA files in memory: \(store.policyFilesInMemory)"
    }

    /// Which policy the URL gets, loudly when verification is off, and whether it can be enforced.
    private static func tlsRows(_ tls: TLSPolicyReport) -> [(key: String, value: String)] {
        var rows: [(key: String, value: String)] = [("for the URL", tls.url)]
        if let policy = tls.policy {
            rows.append(("policy", policy))
        } else {
            rows.append(
                (
                    "policy",
                    tls.url.lowercased().hasPrefix("https:")
                        ? "none: the system's certificate authorities, full verification"
                        : "none: plain http has no TLS"
                ))
        }
        if tls.isInsecure { rows.append(("WARNING", "certificate verification is DISABLED (--insecure)")) }
        if tls.policy != nil {
            rows.append(
                (
                    "enforced",
                    tls.unenforceableReason.map { "no: \($0)" } ?? "yes, by Courier's platform kit (libcurl checks it during the handshake)"
                ))
        }
        return rows
    }

    private static func describe(_ location: CertificateAuthorities.Location) -> String {
        guard location.exists else { return "missing" }
        guard location.isReadable else { return "not readable" }
        return location.certificateCount.map { "readable, \($0) certificates" } ?? "readable"
    }
}
