import Foundation

extension PlatformReport {
    /// The CA certificates a TLS transfer through FoundationNetworking verifies servers against.
    ///
    /// The rule, as FoundationNetworking 6.3.1 applies it on Linux for every transfer
    /// (`_EasyHandle.setCARootBundlePath()`): if libcurl has a CA file compiled in
    /// (``Libcurl/defaultCAFile``), that file is used, whether or not it exists; otherwise, with
    /// libcurl 7.84 or later (it asks libcurl through `CURLINFO_CAINFO`), the first of
    /// ``fallbackFiles`` that exists and is not a directory. libcurl's compiled-in CA directory
    /// (``Libcurl/defaultCAPath``) is used in addition. No environment variable changes this on
    /// Linux: `URLSessionCertificateAuthorityInfoFile` is read on Android only, and libcurl itself
    /// reads neither `CURL_CA_BUNDLE` nor `SSL_CERT_FILE` (the `curl` tool does).
    public struct CertificateAuthorities: Sendable, Codable, Equatable {
        /// Where the CA file in use came from.
        public enum Source: String, Sendable, Codable {
            /// libcurl's compiled-in default.
            case libcurlDefault
            /// FoundationNetworking's list of usual places (libcurl has no default).
            case foundationFallback
            /// None: no file is set, so only ``directory`` (if any) can verify servers.
            case none
        }

        /// One CA file or directory and what the file system says about it.
        public struct Location: Sendable, Codable, Equatable {
            /// Its path.
            public var path: String
            /// Whether it exists.
            public var exists: Bool
            /// Whether it can be read (for a directory: listed).
            public var isReadable: Bool
            /// For a file: how many `BEGIN CERTIFICATE` blocks it holds; `nil` when not read.
            public var certificateCount: Int?
        }

        /// The CA file a transfer will load; `nil` when none is set.
        public var file: Location?
        /// Where ``file`` came from.
        public var source: Source
        /// The CA directory libcurl was built with; `nil` when there is none.
        public var directory: Location?
        /// FoundationNetworking's list of usual CA file locations, each as found on this system.
        public var fallbackFiles: [Location]

        /// The places FoundationNetworking 6.3.1 tries, in its order.
        static let fallbackPaths = [
            "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Alpine, Arch
            "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL, Amazon Linux
            "/usr/share/ssl/certs/ca-bundle.crt",
            "/usr/local/share/certs/ca-root-nss.crt",  // FreeBSD
            "/etc/ssl/cert.pem",  // OpenBSD, macOS
        ]

        /// The libcurl version from which FoundationNetworking can ask for libcurl's default CA
        /// file (`CURLINFO_CAINFO`, 7.84.0) and so applies its fallback list.
        static let caInfoQueryVersion = 0x07_54_00

        static func resolve(libcurl: Libcurl?) -> CertificateAuthorities {
            let fallbacks = fallbackPaths.map { location($0, directory: false) }
            var file: Location?
            var source = Source.none
            if let path = libcurl?.defaultCAFile {
                file = location(path, directory: false)
                source = .libcurlDefault
            } else if let libcurl, libcurl.versionNumber >= caInfoQueryVersion,
                let first = fallbacks.first(where: { $0.exists && !isDirectory($0.path) })
            {
                file = first
                source = .foundationFallback
            }
            let directory = libcurl?.defaultCAPath.map { location($0, directory: true) }
            return CertificateAuthorities(file: file, source: source, directory: directory, fallbackFiles: fallbacks)
        }

        /// What stops HTTPS from working: a CA file that is set but cannot be loaded fails every
        /// TLS transfer (libcurl error 77, even when the directory is fine), and with neither a
        /// file nor a usable directory no server can be verified.
        var problems: [Problem] {
            if let file {
                guard file.exists, file.isReadable, !Self.isDirectory(file.path) else {
                    let what = file.exists ? "cannot be read" : "does not exist"
                    return [
                        Problem(
                            kind: .certificateAuthoritiesMissing,
                            message:
                                "CA file \(file.path) (\(source == .libcurlDefault ? "libcurl's default" : "FoundationNetworking's choice")) \(what): every HTTPS transfer fails"
                        )
                    ]
                }
                return []
            }
            if let directory, directory.exists, directory.isReadable { return [] }
            let tried = ([directory?.path].compactMap { $0 } + Self.fallbackPaths).joined(separator: ", ")
            return [
                Problem(
                    kind: .certificateAuthoritiesMissing,
                    message: "no CA certificates found (looked at \(tried)): every HTTPS transfer fails")
            ]
        }

        static func location(_ path: String, directory: Bool) -> Location {
            let exists = FileManager.default.fileExists(atPath: path)
            let readable = exists && access(path, R_OK) == 0
            var count: Int?
            if !directory, readable, !isDirectory(path), let data = FileManager.default.contents(atPath: path) {
                count = certificateCount(in: data)
            }
            return Location(path: path, exists: exists, isReadable: readable, certificateCount: count)
        }

        static func isDirectory(_ path: String) -> Bool {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }

        /// Counts PEM certificate headers: a cheap sign that the file is a bundle and not empty.
        static func certificateCount(in data: Data) -> Int {
            let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
            var count = 0
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                guard bytes.count >= marker.count else { return }
                var index = 0
                let last = bytes.count - marker.count
                while index <= last {
                    if bytes[index] == marker[0], zip(marker.indices, index...).allSatisfy({ bytes[$1] == marker[$0] }) {
                        count += 1
                        index += marker.count
                    } else {
                        index += 1
                    }
                }
            }
            return count
        }
    }
}
