import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `PlatformReport`: libcurl as read from this process, the proxy rules (a table checked against
/// the `curl` 7.88.1 tool on the same libcurl), the CA file rule, the temporary directory check.
final class PlatformReportTests: XCTestCase {
    private typealias Proxy = PlatformReport.ProxyEnvironment

    // MARK: - Text

    /// The text form (`courier doctor`'s): long values wrap under the value column.
    func testLongValuesWrapUnderTheValueColumn() {
        XCTAssertEqual(PlatformReport.wrap("aa bb cc dd", width: 5), ["aa bb", "cc dd"])
        XCTAssertEqual(PlatformReport.wrap("averyverylongword x", width: 5), ["averyverylongword", "x"])
        let report = SessionManager.platformReport()
        for line in report.text(columns: 60).split(separator: "\n") where !line.contains("/") {
            // Paths and single long words may not fit; everything else does.
            if line.split(separator: " ").allSatisfy({ $0.count < 30 }) { XCTAssertLessThanOrEqual(line.count, 60, String(line)) }
        }
    }

    // MARK: - libcurl

    /// FoundationNetworking's libcurl is found in the process, and its self-description is
    /// consistent: the version string starts x.y.z and agrees with the 24-bit number.
    func testLibcurlIsReadFromTheProcessAndItsVersionIsConsistent() throws {
        let curl = try XCTUnwrap(PlatformReport.Libcurl.loaded(), "FoundationNetworking links libcurl")
        let parts = curl.version.split(separator: ".").map { Int($0.prefix(while: \.isNumber)) }
        XCTAssertGreaterThanOrEqual(parts.count, 3, curl.version)
        let (major, minor, patch) = (try XCTUnwrap(parts[0]), try XCTUnwrap(parts[1]), try XCTUnwrap(parts[2]))
        XCTAssertEqual(curl.versionNumber, major << 16 | minor << 8 | patch, curl.version)
        XCTAssertGreaterThanOrEqual(major, 7)
        XCTAssertTrue(curl.protocols.contains("http") && curl.protocols.contains("https"), "\(curl.protocols)")
        XCTAssertEqual(curl.supportsTLS, curl.sslVersion != nil)
        XCTAssertFalse(curl.host.isEmpty)
        XCTAssertTrue(curl.path?.contains("libcurl") ?? false, curl.path ?? "no path")
        // The struct's age follows the version (CURLVERSION_SEVENTH came with 7.70, ELEVENTH with 7.87).
        if curl.versionNumber >= 0x07_57_00 { XCTAssertGreaterThanOrEqual(curl.age, 10) }
        if curl.versionNumber >= 0x07_46_00 { XCTAssertGreaterThanOrEqual(curl.age, 6) }
        // Every libcurl from 7.45 (CURLINFO_ACTIVESOCKET) has what Courier's wss:// needs.
        if curl.versionNumber >= 0x07_2D_00 {
            XCTAssertEqual(curl.missingStreamFunctions, [])
            XCTAssertTrue(curl.supportsConnectOnlyStreams)
        }
    }

    /// From age 10 libcurl names its features itself; the bits Courier reads must say the same,
    /// which checks the bit constants and the offset of `features` in the struct.
    func testFeatureBitsAgreeWithLibcurlsOwnNames() throws {
        let curl = try XCTUnwrap(PlatformReport.Libcurl.loaded())
        try XCTSkipUnless(curl.age >= 10, "libcurl \(curl.version) has no feature_names")
        let fromBits = PlatformReport.Libcurl.bitNames.filter { curl.featureBits & $0.0 != 0 }.map(\.1)
        for name in ["HTTP2", "HTTP3", "SSL", "libz", "brotli", "zstd", "IPv6"] {
            XCTAssertEqual(fromBits.contains(name), curl.features.contains(name), name)
        }
        XCTAssertEqual(curl.supportsHTTP2, curl.features.contains("HTTP2"))
        XCTAssertEqual(curl.supportsBrotli, curl.features.contains("brotli"))
        XCTAssertEqual(curl.supportsZstd, curl.features.contains("zstd"))
        XCTAssertEqual(curl.supportsBrotli, curl.brotliVersion != nil)
        XCTAssertEqual(curl.supportsZstd, curl.zstdVersion != nil)
    }

    /// A struct of age 5 (libcurl 7.66) ends before `cainfo`: nothing past its fields is read,
    /// and the feature names come from the bits.
    func testTheReaderStopsAtTheStructsAge() throws {
        var layout = CLayout()
        let strings = ["7.66.0", "x86_64-test", "OpenSSL/1.1.1", "1.2.11", "http", "https", "1.0.7", "1.39.2"]
        let cStrings = strings.map { strdup($0)! }
        defer { cStrings.forEach { free($0) } }
        let protocols = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: 3)
        defer { protocols.deallocate() }
        protocols[0] = UnsafePointer(cStrings[4])
        protocols[1] = UnsafePointer(cStrings[5])
        protocols[2] = nil
        layout.append(CInt(5))  // age
        layout.append(UnsafePointer(cStrings[0]))  // version
        layout.append(CUnsignedInt(0x07_42_00))
        layout.append(UnsafePointer(cStrings[1]))  // host
        layout.append(CInt(bitPattern: (1 << 16) | (1 << 2) | (1 << 23)))  // HTTP2, SSL, brotli
        layout.append(UnsafePointer(cStrings[2]))  // ssl_version
        layout.append(CLong(0))
        layout.append(UnsafePointer(cStrings[3]))  // libz_version
        layout.append(UnsafePointer(protocols))
        layout.append(UnsafePointer<CChar>?.none)  // ares
        layout.append(CInt(0))
        layout.append(UnsafePointer<CChar>?.none)  // libidn
        layout.append(CInt(0))  // iconv_ver_num
        layout.append(UnsafePointer<CChar>?.none)  // libssh_version
        layout.append(CUnsignedInt(0))
        layout.append(UnsafePointer(cStrings[6]))  // brotli_version
        layout.append(CUnsignedInt(0))
        layout.append(UnsafePointer(cStrings[7]))  // nghttp2_version
        layout.append(UnsafePointer<CChar>?.none)  // quic_version
        // What an age-6 struct would have next: must not be read.
        layout.append(UnsafePointer(cStrings[1]))
        layout.append(UnsafePointer(cStrings[1]))
        let curl = try layout.withBytes { try XCTUnwrap(PlatformReport.Libcurl.read($0)) }
        XCTAssertEqual(curl.version, "7.66.0")
        XCTAssertEqual(curl.versionNumber, 0x07_42_00)
        XCTAssertEqual(curl.age, 5)
        XCTAssertEqual(curl.host, "x86_64-test")
        XCTAssertEqual(curl.sslVersion, "OpenSSL/1.1.1")
        XCTAssertEqual(curl.libzVersion, "1.2.11")
        XCTAssertEqual(curl.protocols, ["http", "https"])
        XCTAssertEqual(curl.brotliVersion, "1.0.7")
        XCTAssertEqual(curl.nghttp2Version, "1.39.2")
        XCTAssertNil(curl.quicVersion)
        XCTAssertNil(curl.defaultCAFile, "age 5 has no cainfo")
        XCTAssertNil(curl.defaultCAPath)
        XCTAssertNil(curl.zstdVersion)
        XCTAssertEqual(curl.features, ["SSL", "HTTP2", "brotli"])
        XCTAssertTrue(curl.supportsHTTP2 && curl.supportsBrotli && curl.supportsTLS)
        XCTAssertFalse(curl.supportsZstd || curl.supportsHTTP3 || curl.supportsWebSockets)
    }

    func testMappingLookupFindsTheFileContainingAnAddress() {
        let maps = """
            00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/courier
            7f0000000000-7f0000100000 r-xp 00000000 08:02 1234      /usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0
            7f0000100000-7f0000200000 rw-p 00000000 00:00 0 
            7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
            """
        XCTAssertEqual(DynamicLibrary.path(containing: 0x7f00_0000_0040, maps: maps), "/usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0")
        XCTAssertEqual(DynamicLibrary.path(containing: 0x0040_1000, maps: maps), "/usr/bin/courier")
        XCTAssertNil(DynamicLibrary.path(containing: 0x7f00_0010_0040, maps: maps), "anonymous mapping")
        XCTAssertNil(DynamicLibrary.path(containing: 0x7ffd_0000_0010, maps: maps), "[stack] is no file")
        XCTAssertNil(DynamicLibrary.path(containing: 0x10, maps: maps))
    }

    // MARK: - Proxy rules

    /// `no_proxy` matching, libcurl 7.88.1's rules. Every row was checked with the `curl` tool
    /// on this machine's libcurl 7.88.1 (a proxy on a closed port: "direct" rows resolved the host
    /// themselves, "proxy" rows tried the proxy).
    func testNoProxyMatchingTable() {
        let table: [(host: String, list: String, match: String?, line: UInt)] = [
            ("nohost.invalid", "nohost.invalid", "nohost.invalid", #line),
            ("nohost.invalid", ".invalid", ".invalid", #line),
            ("nohost.invalid", "invalid", "invalid", #line),  // a suffix at a dot, without the leading dot
            ("nohost.invalid", "host.invalid", nil, #line),  // not at a dot
            ("nohost.invalid", "x, nohost.invalid", "nohost.invalid", #line),
            ("nohost.invalid", "x nohost.invalid", "nohost.invalid", #line),  // spaces separate too
            ("nohost.invalid", "x ,nohost.invalid", "nohost.invalid", #line),
            ("nohost.invalid", "*", "*", #line),
            ("nohost.invalid", "x,*", nil, #line),  // * only as the whole value
            ("localhost", " * ", nil, #line),
            ("nohost.invalid", "nohost.invalid:80", nil, #line),  // entries carry no port
            ("nohost.invalid", "NOHOST.INVALID", "NOHOST.INVALID", #line),
            ("nohost.invalid", "nohost.invalid.", "nohost.invalid.", #line),
            ("localhost.", "LOCALHOST.", "LOCALHOST.", #line),
            ("localhost", "\tlocalhost\t", "localhost", #line),
            ("localhost", ",,localhost,,", "localhost", #line),
            ("localhost", "x;localhost", nil, #line),  // ; is no separator
            ("a.localhost", "*.localhost", nil, #line),  // no globs
            ("a.localhost", "..localhost", nil, #line),  // one leading dot only
            ("localhost", ".", nil, #line),
            ("localhost", "ocalhost", nil, #line),
            ("localhost", "local", nil, #line),
            ("LocalHost", "a,localhost", "localhost", #line),
            ("127.0.0.1", "127.0.0.1", "127.0.0.1", #line),
            ("127.0.0.1", "127.0.0.0/8", "127.0.0.0/8", #line),
            ("127.0.0.3", "127.0.0.2/31", "127.0.0.2/31", #line),
            ("127.0.0.1", "127.0.0.1/33", nil, #line),
            ("127.0.0.1", "127.0.0.1/0", "127.0.0.1/0", #line),  // /0 means all 32 bits
            ("127.0.0.1", "127.0.0.5/0", nil, #line),
            ("127.0.0.1", "127.0.0.1/x", "127.0.0.1/x", #line),  // an unreadable length is 0, so 32
            ("127.0.0.1", "localhost", nil, #line),  // names never cover addresses
            ("127.0.0.1", "0.0.1", nil, #line),
            ("127.0.0.1", "127.0.0.1:1", nil, #line),
            ("::1", "::1", "::1", #line),  // IPv6: compared as text
            ("[::1]", "::1", "::1", #line),
            ("::1", "[::1]", nil, #line),
            ("::1", "::0:1", nil, #line),
            ("::1", "::1/128", nil, #line),
            ("::1", "::/0", nil, #line),
            ("", "*", nil, #line),
            ("example.com", "", nil, #line),
        ]
        for row in table {
            XCTAssertEqual(Proxy.noProxyEntry(matching: row.host, in: row.list), row.match, "\(row.host) vs '\(row.list)'", line: row.line)
        }
    }

    /// Which variable libcurl takes the proxy from, and no_proxy before NO_PROXY (each row checked
    /// with the curl tool as above).
    func testProxyVariableSelectionTable() throws {
        let table: [(url: String, environment: [String: String], proxy: String?, from: String?, line: UInt)] = [
            ("http://h/", ["http_proxy": "http://p:9"], "http://p:9", "http_proxy", #line),
            ("http://h/", ["HTTP_PROXY": "http://p:9"], nil, nil, #line),  // never read
            ("http://h/", ["http_proxy": "", "all_proxy": "http://p:9"], "http://p:9", "all_proxy", #line),  // empty = unset
            ("http://h/", ["ALL_PROXY": "http://p:9"], "http://p:9", "ALL_PROXY", #line),
            ("http://h/", ["all_proxy": "http://p:9", "ALL_PROXY": "http://q:8"], "http://p:9", "all_proxy", #line),
            ("http://h/", ["ALL_PROXY": "http://q:8", "http_proxy": "http://p:9"], "http://p:9", "http_proxy", #line),
            ("https://h/", ["https_proxy": "http://p:9"], "http://p:9", "https_proxy", #line),
            ("https://h/", ["HTTPS_PROXY": "http://p:9"], "http://p:9", "HTTPS_PROXY", #line),
            ("https://h/", ["https_proxy": "http://p:9", "HTTPS_PROXY": "http://q:8"], "http://p:9", "https_proxy", #line),
            ("https://h/", ["http_proxy": "http://p:9"], nil, nil, #line),  // http_proxy is for http only
            ("http://h/", [:], nil, nil, #line),
            ("http://h/", ["http_proxy": "p:9"], "p:9", "http_proxy", #line),
            ("http://u:pw@h/", ["http_proxy": "http://user:secret@p:9"], "http://***@p:9", "http_proxy", #line),
        ]
        for row in table {
            let decision = Proxy.decision(for: try XCTUnwrap(URL(string: row.url)), environment: row.environment)
            XCTAssertEqual(decision.proxy, row.proxy, "\(row.url) \(row.environment)", line: row.line)
            XCTAssertEqual(decision.proxyVariable, row.from, "\(row.url) \(row.environment)", line: row.line)
            XCTAssertNil(decision.bypassedBy, line: row.line)
        }
    }

    func testNoProxyIsReadBeforeNO_PROXYAndOnlyOneCounts() throws {
        let url = try XCTUnwrap(URL(string: "http://localhost:1/"))
        let proxied = ["http_proxy": "http://p:9"]
        var decision = Proxy.decision(for: url, environment: proxied.merging(["no_proxy": "", "NO_PROXY": "localhost"]) { $1 })
        XCTAssertNil(decision.proxy)
        XCTAssertEqual(decision.bypassedBy, "localhost")
        XCTAssertEqual(decision.noProxyVariable, "NO_PROXY")
        decision = Proxy.decision(for: url, environment: proxied.merging(["no_proxy": "x", "NO_PROXY": "localhost"]) { $1 })
        XCTAssertEqual(decision.proxy, "http://p:9", "no_proxy is set, so NO_PROXY is not read")
        decision = Proxy.decision(for: url, environment: proxied.merging(["no_proxy": "*"]) { $1 })
        XCTAssertEqual(decision.bypassedBy, "*")
        XCTAssertEqual(decision.noProxyVariable, "no_proxy")
    }

    func testVariablesAreListedWithWhatLibcurlDoesWithThem() {
        let environment = [
            "HTTP_PROXY": "http://a:1", "https_proxy": "http://u:pw@b:2", "HTTPS_PROXY": "http://c:3",
            "NO_PROXY": "localhost", "PATH": "/bin",
        ]
        let proxy = Proxy(environment: environment, url: nil)
        XCTAssertEqual(proxy.variables.map(\.name), ["HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "NO_PROXY"])
        XCTAssertEqual(proxy.variables.map(\.value), ["http://a:1", "http://***@b:2", "http://c:3", "localhost"])
        XCTAssertTrue(proxy.variables[0].note.hasPrefix("ignored"), proxy.variables[0].note)
        XCTAssertTrue(proxy.variables[2].note.hasPrefix("ignored"), proxy.variables[2].note)
        XCTAssertFalse(proxy.variables[3].note.hasPrefix("ignored"), proxy.variables[3].note)
        XCTAssertNil(proxy.effective)
    }

    /// A proxy variable's value goes through the one Redaction: the whole user info (to the last
    /// `@`, where libcurl ends it) and secret query parameters; a value without a scheme is read
    /// as `http://`, as libcurl reads it.
    func testProxyUserInfoAndSecretParametersAreMaskedByTheOneRedaction() {
        let table: [(value: String, shown: String, line: UInt)] = [
            ("http://user:secret@proxy:3128", "http://***@proxy:3128", #line),
            ("user:secret@proxy:3128", "***@proxy:3128", #line),
            ("http://user@proxy:3128", "http://***@proxy:3128", #line),
            ("http://proxy:3128", "http://proxy:3128", #line),
            ("proxy:3128", "proxy:3128", #line),
            // A password holding `@`: cut at the last one, never showing a piece of it.
            ("http://u:P@W@proxy:3128", "http://***@proxy:3128", #line),
            ("u:P@W@proxy:3128", "***@proxy:3128", #line),
            ("socks5h://u:P@W@proxy:1080", "socks5h://***@proxy:1080", #line),
            // A query on the proxy URL: its secrets too.
            ("http://proxy:3128/?token=T&region=eu", "http://proxy:3128/?token=***&region=eu", #line),
            ("proxy:3128/?X-Amz-Signature=S", "proxy:3128/?X-Amz-Signature=***", #line),
        ]
        for row in table {
            XCTAssertEqual(Proxy.masked(row.value, .default), row.shown, row.value, line: row.line)
            let shown = Proxy(environment: ["https_proxy": row.value], url: URL(string: "https://h/")!)
            XCTAssertEqual(shown.variables.map(\.value), [row.shown], line: row.line)
            XCTAssertEqual(shown.effective?.proxy, row.shown, line: row.line)
        }
        let custom = Redaction.default.adding(queryParameters: ["session"])
        XCTAssertEqual(Proxy.masked("http://p:1/?session=s", custom), "http://p:1/?session=***")
    }

    func testTheURLDecidedForIsRedacted() throws {
        let url = try XCTUnwrap(URL(string: "http://u:P%40W@h/x?token=T&page=2"))
        XCTAssertEqual(Proxy.decision(for: url, environment: [:]).url, "http://***@h/x?token=***&page=2")
        let custom = Redaction.default.adding(queryParameters: ["page"])
        XCTAssertEqual(Proxy.decision(for: url, environment: [:], redaction: custom).url, "http://***@h/x?token=***&page=***")
        let report = PlatformReport.current(for: url, redaction: custom)
        XCTAssertEqual(report.proxy.effective?.url, "http://***@h/x?token=***&page=***")
    }

    // MARK: - CA certificates

    func testTheCAFileIsLibcurlsDefaultEvenWhenMissing() throws {
        var curl = try XCTUnwrap(PlatformReport.Libcurl.loaded())
        curl.defaultCAFile = "/nonexistent/courier-ca.crt"
        curl.defaultCAPath = nil
        let authorities = PlatformReport.CertificateAuthorities.resolve(libcurl: curl)
        XCTAssertEqual(authorities.file?.path, "/nonexistent/courier-ca.crt")
        XCTAssertEqual(authorities.source, .libcurlDefault)
        XCTAssertEqual(authorities.problems.map(\.kind), [.certificateAuthoritiesMissing])
        XCTAssertTrue(authorities.problems[0].message.contains("/nonexistent/courier-ca.crt"), authorities.problems[0].message)
    }

    func testWithoutALibcurlDefaultFoundationNetworkingsListDecides() throws {
        var curl = try XCTUnwrap(PlatformReport.Libcurl.loaded())
        curl.defaultCAFile = nil
        curl.defaultCAPath = nil
        curl.versionNumber = 0x07_58_01
        let authorities = PlatformReport.CertificateAuthorities.resolve(libcurl: curl)
        let firstPresent = PlatformReport.CertificateAuthorities.fallbackPaths.first { FileManager.default.fileExists(atPath: $0) }
        XCTAssertEqual(authorities.file?.path, firstPresent)
        XCTAssertEqual(authorities.source, firstPresent == nil ? .none : .foundationFallback)
        // A libcurl older than 7.84 cannot be asked, so FoundationNetworking sets nothing.
        curl.versionNumber = 0x07_53_00
        let old = PlatformReport.CertificateAuthorities.resolve(libcurl: curl)
        XCTAssertNil(old.file)
        XCTAssertEqual(old.source, PlatformReport.CertificateAuthorities.Source.none)
        XCTAssertEqual(old.problems.map(\.kind), [.certificateAuthoritiesMissing], "no file and no directory")
        curl.defaultCAPath = NSTemporaryDirectory()
        XCTAssertEqual(PlatformReport.CertificateAuthorities.resolve(libcurl: curl).problems, [], "a directory alone can verify")
    }

    func testCertificatesAreCounted() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        XCTAssertEqual(PlatformReport.CertificateAuthorities.certificateCount(in: Data((pem + "# x\n" + pem).utf8)), 2)
        XCTAssertEqual(PlatformReport.CertificateAuthorities.certificateCount(in: Data()), 0)
    }

    // MARK: - Temporary directory, report

    /// CI runs as root, where permissions do not stop a write: a path that is a regular file is a
    /// directory nobody can create a file in.
    func testATemporaryDirectoryThatIsAFileIsAProblem() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-not-a-dir-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let report = PlatformReport.current(temporaryDirectory: file)
        XCTAssertFalse(report.temporaryDirectory.isWritable)
        XCTAssertNotNil(report.temporaryDirectory.error)
        XCTAssertFalse(report.isHealthy)
        let problem = try XCTUnwrap(report.problems.first { $0.kind == .temporaryDirectoryNotWritable })
        XCTAssertTrue(problem.message.contains(file.path), problem.message)
    }

    func testTheManagersOwnTemporaryDirectoryIsChecked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = SessionManager.Configuration()
        configuration.temporaryDirectory = directory
        let report = SessionManager(configuration: configuration).platformReport()
        XCTAssertEqual(report.temporaryDirectory.path, directory.path)
        XCTAssertTrue(report.temporaryDirectory.isWritable)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "the probe file is removed")
    }

    /// On this machine nothing is broken, and the report survives a JSON round trip.
    func testTheReportIsHealthyHereAndCodable() throws {
        let report = SessionManager.platformReport(for: URL(string: "https://example.com/a"))
        XCTAssertEqual(report.problems, [], "\(report.problems)")
        XCTAssertEqual(report.courierVersion, CourierInfo.version)
        XCTAssertFalse(report.swiftCompiler.isEmpty)
        XCTAssertTrue(
            report.foundationNetworkingLibrary?.contains("FoundationNetworking") ?? false,
            report.foundationNetworkingLibrary ?? "nil")
        XCTAssertEqual(report.proxy.effective?.url, "https://example.com/a")
        let data = try JSONEncoder().encode(report)
        XCTAssertEqual(try JSONDecoder().decode(PlatformReport.self, from: data), report)
    }

    func testTrapsSayHowTheyAreKnown() {
        let measured = PlatformReport.Trap.known(measuredToolchain: true, newer: false)
        XCTAssertEqual(measured.map(\.section), ["7.1", "7.2", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "4.7"])
        XCTAssertTrue(measured.allSatisfy { $0.applies == .measured })
        XCTAssertEqual(measured.filter { $0.trigger == .server }.map(\.section), ["7.1", "7.2"])
        let newer = PlatformReport.Trap.known(measuredToolchain: false, newer: true)
        XCTAssertEqual(newer[0].applies, .unknown, "§7.1 has an upstream fix")
        XCTAssertEqual(newer[1].applies, .assumed, "§7.2 has none")
        XCTAssertTrue(PlatformReport.Trap.known(measuredToolchain: false, newer: false).allSatisfy { $0.applies == .assumed })
        #if compiler(>=6.3.1) && !compiler(>=6.3.2)
        XCTAssertTrue(PlatformReport.Trap.known.allSatisfy { $0.applies == .measured }, "this is the measured toolchain")
        #endif
    }
}

/// Lays out C struct fields the way `CStructReader` expects to find them, for a synthetic
/// `curl_version_info_data`.
private struct CLayout {
    private var bytes: [UInt8] = []

    mutating func append<T>(_ value: T) {
        let alignment = MemoryLayout<T>.alignment
        while bytes.count % alignment != 0 { bytes.append(0) }
        withUnsafeBytes(of: value) { bytes += $0 }
    }

    func withBytes<R>(_ body: (UnsafeRawPointer) throws -> R) rethrows -> R {
        // An 8-byte-aligned copy: the reader loads pointers at aligned offsets from the base.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        defer { buffer.deallocate() }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return try body(UnsafeRawPointer(buffer))
    }
}
