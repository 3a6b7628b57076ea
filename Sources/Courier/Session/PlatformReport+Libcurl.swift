import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PlatformReport {
    /// The libcurl FoundationNetworking loaded, as libcurl itself describes it
    /// (`curl_version_info`, read from the running process; Docs/Platform.md, "How the platform
    /// report reads libcurl").
    public struct Libcurl: Sendable, Codable, Equatable {
        /// The version string, e.g. `7.88.1`.
        public var version: String
        /// The version as libcurl's 24-bit number, `major << 16 | minor << 8 | patch`.
        public var versionNumber: Int
        /// The age of libcurl's `curl_version_info_data` (0 for 7.10 … 10 for 7.87 to 8.7, 11 from
        /// 8.8): which of its fields exist.
        public var age: Int
        /// The host libcurl was built for, e.g. `x86_64-pc-linux-gnu`.
        public var host: String
        /// The file the library was loaded from, when the dynamic linker says.
        public var path: String?
        /// The TLS library and its version, e.g. `OpenSSL/3.0.19`; `nil` without TLS.
        public var sslVersion: String?
        /// zlib's version; `nil` without it.
        public var libzVersion: String?
        /// brotli's version (age 4 and later); `nil` without it.
        public var brotliVersion: String?
        /// zstd's version (age 7 and later); `nil` without it.
        public var zstdVersion: String?
        /// nghttp2's version (age 5 and later); `nil` without HTTP/2.
        public var nghttp2Version: String?
        /// The QUIC library (age 5 and later); `nil` without HTTP/3.
        public var quicVersion: String?
        /// The CA file compiled in as the default (age 6, libcurl 7.70, and later); `nil` when
        /// there is none or libcurl is older.
        public var defaultCAFile: String?
        /// The CA directory compiled in as the default (age 6 and later).
        public var defaultCAPath: String?
        /// The protocols it was built with, e.g. `http`, `https`, `ws`, `wss`.
        public var protocols: [String]
        /// Its feature names, e.g. `HTTP2`, `brotli`, `zstd` (libcurl's own list from age 10;
        /// from the feature bits before).
        public var features: [String]
        /// The raw feature bits (`CURL_VERSION_*`).
        public var featureBits: UInt32
        /// The libcurl functions Courier's `wss://` needs (a connection handed over as a byte
        /// stream, `CURLOPT_CONNECT_ONLY`: `curl_easy_perform`, `curl_easy_recv`,
        /// `curl_easy_send`…) that this libcurl lacks: empty when it has them all
        /// (Docs/WebSocket.md, "wss:// on the system libcurl"); `nil` when not looked up (a report
        /// decoded from an older version).
        public var missingStreamFunctions: [String]? = nil

        /// Whether Courier's `wss://` can run on this libcurl (``missingStreamFunctions`` is empty).
        public var supportsConnectOnlyStreams: Bool { missingStreamFunctions?.isEmpty ?? false }

        /// HTTP/2 (`CURL_VERSION_HTTP2`). FoundationNetworking still sends HTTP/1.1 unless a
        /// server offers h2 over TLS.
        public var supportsHTTP2: Bool { featureBits & Self.http2Bit != 0 }
        /// HTTP/3 (`CURL_VERSION_HTTP3`).
        public var supportsHTTP3: Bool { featureBits & Self.http3Bit != 0 }
        /// TLS (`CURL_VERSION_SSL`): without it there is no HTTPS at all.
        public var supportsTLS: Bool { featureBits & Self.sslBit != 0 }
        /// gzip and deflate decoding (`CURL_VERSION_LIBZ`).
        public var supportsLibz: Bool { featureBits & Self.libzBit != 0 }
        /// brotli decoding (`CURL_VERSION_BROTLI`).
        public var supportsBrotli: Bool { featureBits & Self.brotliBit != 0 }
        /// zstd decoding (`CURL_VERSION_ZSTD`).
        public var supportsZstd: Bool { featureBits & Self.zstdBit != 0 }
        /// WebSockets: `ws` or `wss` among the protocols. FoundationNetworking's
        /// `URLSessionWebSocketTask` needs it.
        public var supportsWebSockets: Bool { protocols.contains("ws") || protocols.contains("wss") }

        // The feature bits from curl/curl.h; they are ABI and never renumbered.
        static let ipv6Bit: UInt32 = 1 << 0
        static let sslBit: UInt32 = 1 << 2
        static let libzBit: UInt32 = 1 << 3
        static let http2Bit: UInt32 = 1 << 16
        static let brotliBit: UInt32 = 1 << 23
        static let http3Bit: UInt32 = 1 << 25
        static let zstdBit: UInt32 = 1 << 26

        /// Names for the bits, for a libcurl older than 7.87 (age < 10) that has no name list.
        static let bitNames: [(UInt32, String)] = [
            (1 << 0, "IPv6"), (1 << 2, "SSL"), (1 << 3, "libz"), (1 << 4, "NTLM"), (1 << 5, "GSS-Negotiate"),
            (1 << 6, "Debug"), (1 << 7, "AsynchDNS"), (1 << 8, "SPNEGO"), (1 << 9, "Largefile"), (1 << 10, "IDN"),
            (1 << 11, "SSPI"), (1 << 12, "CharConv"), (1 << 13, "TrackMemory"), (1 << 14, "TLS-SRP"),
            (1 << 15, "NTLM_WB"), (1 << 16, "HTTP2"), (1 << 17, "GSS-API"), (1 << 18, "Kerberos"),
            (1 << 19, "UnixSockets"), (1 << 20, "PSL"), (1 << 21, "HTTPS-proxy"), (1 << 22, "MultiSSL"),
            (1 << 23, "brotli"), (1 << 24, "alt-svc"), (1 << 25, "HTTP3"), (1 << 26, "zstd"), (1 << 27, "Unicode"),
            (1 << 28, "HSTS"), (1 << 29, "gsasl"), (1 << 30, "threadsafe"),
        ]

        /// The newest struct age this reader knows the layout of (`CURLVERSION_ELEVENTH`, 7.87).
        /// Passed to `curl_version_info` as the age this program understands; fields of a newer
        /// libcurl beyond it are not read.
        static let newestKnownAge: CInt = 10

        /// Reads the libcurl in this process: the one the dynamic linker already resolved for
        /// FoundationNetworking, never a fresh `dlopen` of some other copy on disk.
        static func loaded() -> Libcurl? {
            #if canImport(Glibc)
            guard let symbol = DynamicLibrary.loadedSymbol("curl_version_info", library: "libcurl.so.4") else { return nil }
            // `curl_version_info_data *curl_version_info(CURLversion)`; CURLversion is a C enum, an int.
            typealias VersionInfo = @convention(c) (CInt) -> UnsafeRawPointer?
            let function = unsafeBitCast(symbol, to: VersionInfo.self)
            guard let data = function(newestKnownAge) else { return nil }
            var libcurl = read(data)
            libcurl?.path = DynamicLibrary.path(containing: UnsafeRawPointer(symbol))
            libcurl?.missingStreamFunctions = CurlByteStream.missingFunctions(found: CurlByteStream.functionsFound) ?? []
            return libcurl
            #else
            return nil
            #endif
        }

        /// Reads a `curl_version_info_data` at `data`, field by field in declaration order with C
        /// alignment, and only the fields its `age` says exist.
        static func read(_ data: UnsafeRawPointer) -> Libcurl? {
            var fields = CStructReader(base: data)
            let age = fields.next(CInt.self)
            guard age >= 0, let version = fields.string() else { return nil }
            let versionNumber = fields.next(CUnsignedInt.self)
            let host = fields.string() ?? ""
            let bits = UInt32(bitPattern: fields.next(CInt.self))
            let sslVersion = fields.string()
            _ = fields.next(CLong.self)  // ssl_version_num: always 0 since 7.x
            let libzVersion = fields.string()
            let protocols = CStructReader.strings(fields.next(UnsafePointer<UnsafePointer<CChar>?>?.self))
            var libcurl = Libcurl(
                version: version, versionNumber: Int(versionNumber), age: Int(age), host: host, path: nil,
                sslVersion: sslVersion, libzVersion: libzVersion, brotliVersion: nil, zstdVersion: nil,
                nghttp2Version: nil, quicVersion: nil, defaultCAFile: nil, defaultCAPath: nil,
                protocols: protocols, features: [], featureBits: bits)
            var names: [String]?
            if age >= 1 {  // 7.11.1: ares, ares_num
                _ = fields.string()
                _ = fields.next(CInt.self)
            }
            if age >= 2 { _ = fields.string() }  // 7.12.0: libidn
            if age >= 3 {  // 7.16.1: iconv_ver_num, libssh_version
                _ = fields.next(CInt.self)
                _ = fields.string()
            }
            if age >= 4 {  // 7.57.0: brotli_ver_num, brotli_version
                _ = fields.next(CUnsignedInt.self)
                libcurl.brotliVersion = fields.string()
            }
            if age >= 5 {  // 7.66.0: nghttp2_ver_num, nghttp2_version, quic_version
                _ = fields.next(CUnsignedInt.self)
                libcurl.nghttp2Version = fields.string()
                libcurl.quicVersion = fields.string()
            }
            if age >= 6 {  // 7.70.0: cainfo, capath
                libcurl.defaultCAFile = fields.string()
                libcurl.defaultCAPath = fields.string()
            }
            if age >= 7 {  // 7.72.0: zstd_ver_num, zstd_version
                _ = fields.next(CUnsignedInt.self)
                libcurl.zstdVersion = fields.string()
            }
            if age >= 8 { _ = fields.string() }  // 7.75.0: hyper_version
            if age >= 9 { _ = fields.string() }  // 7.77.0: gsasl_version
            if age >= 10 {  // 7.87.0: feature_names
                names = CStructReader.strings(fields.next(UnsafePointer<UnsafePointer<CChar>?>?.self))
            }
            libcurl.features = names ?? bitNames.filter { bits & $0.0 != 0 }.map(\.1)
            return libcurl
        }
    }
}

/// Reads a C struct through a raw pointer, one field after the other, placing each at its natural
/// alignment the way the platform's C compiler does for these scalar and pointer fields.
struct CStructReader {
    let base: UnsafeRawPointer
    private var offset = 0

    init(base: UnsafeRawPointer) { self.base = base }

    mutating func next<T>(_ type: T.Type) -> T {
        let alignment = MemoryLayout<T>.alignment
        offset = (offset + alignment - 1) / alignment * alignment
        defer { offset += MemoryLayout<T>.size }
        return base.load(fromByteOffset: offset, as: T.self)
    }

    /// A `const char *` field; `nil` for NULL.
    mutating func string() -> String? {
        next(UnsafePointer<CChar>?.self).map { String(cString: $0) }
    }

    /// A NULL-terminated `const char *const *` list.
    static func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        while let item = list[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }
}

#if canImport(Glibc)
/// The dynamic linker's view of what this process has loaded.
enum DynamicLibrary {
    /// `name` from the libraries already loaded: first the global scope (the executable and what
    /// it was linked against, where FoundationNetworking's libcurl is), then `library` if it is
    /// loaded but was opened locally. `RTLD_NOLOAD`: never loads a copy that is not in use.
    static func loadedSymbol(_ name: String, library: String) -> UnsafeMutableRawPointer? {
        if let global = dlopen(nil, RTLD_NOW), let symbol = dlsym(global, name) { return symbol }
        guard let handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD) else { return nil }
        // The reference RTLD_NOLOAD took is dropped; the library stays loaded for its other users.
        defer { dlclose(handle) }
        return dlsym(handle, name)
    }

    /// The file the loaded object containing `address` came from, from `/proc/self/maps` (the
    /// kernel's list of this process's mappings; glibc's `dladdr` is a GNU extension Swift's
    /// Glibc module does not import).
    static func path(containing address: UnsafeRawPointer) -> String? {
        // Read to end of file with read(2): procfs files report a size of 0, and readers that
        // trust the size read nothing.
        let descriptor = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return path(containing: UInt(bitPattern: address), maps: String(decoding: bytes, as: UTF8.self))
    }

    /// The path of the mapping in `maps` (lines `start-end perms offset dev inode path`) that
    /// contains `address`.
    static func path(containing address: UInt, maps: String) -> String? {
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { continue }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            guard path.hasPrefix("/") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                start <= address, address < end
            else { continue }
            return path
        }
        return nil
    }
}
#endif
