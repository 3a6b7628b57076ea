import Foundation
internal import CCourierPlatformFixes
internal import CourierSupport

/// The TLS policies registered with the platform kit in this process.
///
/// A policy becomes libcurl options here, once per manager that uses it (so a manager made later
/// reads its CA files again): CA files and PEM data become one PEM blob (`CURLOPT_CAINFO_BLOB`).
/// libcurl 7.88.1's OpenSSL backend loads that blob instead of the CA file (it still loads the CA
/// directory), so "the system's and these" puts the system's CA file first in the blob. Pins one
/// `CURLOPT_PINNEDPUBLICKEY` list, the client identity its paths and password. Identical option
/// sets share one token; the kit keeps every registered set for the life of the process (a few
/// hundred bytes each, plus the CA PEM), so a transfer still running when its manager goes never
/// finds its policy gone.
enum TLSRegistry {
    /// A registered policy: the token its requests carry and the kit options it needs.
    struct Entry: Sendable, Hashable {
        let token: String
        /// The kit's COURIER_TLS_OPTION_ bits.
        let options: UInt32
    }

    /// What the kit is given for a policy.
    struct Options: Hashable {
        var caInfoMode = COURIER_TLS_CA_DEFAULT.rawValue
        var caPathMode = COURIER_TLS_CA_DEFAULT.rawValue
        var caPath: String?
        var caBlob: Data?
        var pinned: String?
        var certificate: String?
        var key: String?
        var password: String?
        var verify = true

        /// The COURIER_TLS_OPTION_ bits these options need libcurl to support.
        var needed: UInt32 {
            var bits = UInt32(COURIER_TLS_OPTION_CAINFO | COURIER_TLS_OPTION_CAPATH | COURIER_TLS_OPTION_VERIFY)
            if caBlob != nil { bits |= UInt32(COURIER_TLS_OPTION_CAINFO_BLOB) }
            if pinned != nil { bits |= UInt32(COURIER_TLS_OPTION_PINNEDPUBLICKEY) }
            if certificate != nil { bits |= UInt32(COURIER_TLS_OPTION_SSLCERT) }
            if key != nil { bits |= UInt32(COURIER_TLS_OPTION_SSLKEY) }
            if password != nil { bits |= UInt32(COURIER_TLS_OPTION_KEYPASSWD) }
            return bits
        }
    }

    private struct State {
        var tokens: [Options: String] = [:]
    }
    private static let state = Locked(State())

    /// The option names, for "this libcurl does not support …".
    static let optionNames: [(bit: UInt32, name: String)] = [
        (UInt32(COURIER_TLS_OPTION_CAINFO), "CURLOPT_CAINFO"), (UInt32(COURIER_TLS_OPTION_CAPATH), "CURLOPT_CAPATH"),
        (UInt32(COURIER_TLS_OPTION_CAINFO_BLOB), "CURLOPT_CAINFO_BLOB (extra CA certificates)"),
        (UInt32(COURIER_TLS_OPTION_PINNEDPUBLICKEY), "CURLOPT_PINNEDPUBLICKEY (public-key pins)"),
        (UInt32(COURIER_TLS_OPTION_SSLCERT), "CURLOPT_SSLCERT (client certificate)"),
        (UInt32(COURIER_TLS_OPTION_SSLKEY), "CURLOPT_SSLKEY (client key)"),
        (UInt32(COURIER_TLS_OPTION_KEYPASSWD), "CURLOPT_KEYPASSWD (key password)"),
        (UInt32(COURIER_TLS_OPTION_VERIFY), "CURLOPT_SSL_VERIFYPEER/VERIFYHOST"),
    ]

    /// Registers `policy` (reading its CA files now), or says why it cannot be.
    static func register(_ policy: TLSPolicy) -> Result<Entry, CourierError> {
        let options: Options
        do {
            options = try makeOptions(policy)
        } catch {
            return .failure(error)
        }
        return state.withLock { state -> Result<Entry, CourierError> in
            if let token = state.tokens[options] {
                return .success(Entry(token: token, options: options.needed))
            }
            let token = newToken()
            let registered = withKitPolicy(options, token: token) { courier_tls_register($0) }
            guard registered == 0 else {
                return .failure(
                    CourierError(
                        code: .tlsPolicyUnenforceable,
                        message: "the TLS policy could not be registered with the platform kit (out of memory)"))
            }
            state.tokens[options] = token
            return .success(Entry(token: token, options: options.needed))
        }
    }

    static func makeOptions(_ policy: TLSPolicy) throws(CourierError) -> Options {
        var options = Options()
        let trust = policy.trust
        if !trust.includesSystemAuthorities {
            options.caInfoMode = COURIER_TLS_CA_NONE.rawValue
            options.caPathMode = COURIER_TLS_CA_NONE.rawValue
        }
        if let directory = trust.directory {
            guard FileManager.default.isReadableFile(atPath: directory) else {
                throw unreadable("CA directory \(directory)", policy)
            }
            options.caPathMode = COURIER_TLS_CA_PATH.rawValue
            options.caPath = directory
        }
        if !trust.authorities.isEmpty {
            var pem = Data()
            if trust.includesSystemAuthorities, let system = PlatformReport.CertificateAuthorities.resolve(libcurl: .loaded()).file {
                // libcurl 7.88.1 (OpenSSL) loads CURLOPT_CAINFO_BLOB *instead of* the CA file (the
                // CA directory is still loaded): the system's file goes into the blob first.
                guard let contents = FileManager.default.contents(atPath: system.path) else {
                    throw unreadable("system CA file \(system.path)", policy)
                }
                pem.append(contents)
                pem.append(0x0A)
            }
            for authority in trust.authorities {
                let data: Data
                switch authority {
                case .pem(let given): data = given
                case .file(let path):
                    guard let read = FileManager.default.contents(atPath: path) else { throw unreadable("CA file \(path)", policy) }
                    data = read
                }
                guard data.range(of: Data("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
                    throw CourierError(
                        code: .tlsPolicyUnenforceable,
                        message: "the TLS policy's \(authority) holds no PEM certificate (-----BEGIN CERTIFICATE-----); nothing was sent")
                }
                pem.append(data)
                pem.append(0x0A)
            }
            options.caBlob = pem
        }
        if !policy.pins.isEmpty { options.pinned = policy.pins.map(\.description).joined(separator: ";") }
        if let identity = policy.clientIdentity {
            for path in [identity.certificateFile, identity.keyFile].compactMap({ $0 })
            where !FileManager.default.isReadableFile(atPath: path) {
                throw unreadable("client certificate or key file \(path)", policy)
            }
            options.certificate = identity.certificateFile
            options.key = identity.keyFile
            options.password = identity.keyPassword
        }
        options.verify = !policy.isInsecure
        return options
    }

    private static func unreadable(_ what: String, _ policy: TLSPolicy) -> CourierError {
        CourierError(
            code: .tlsPolicyUnenforceable,
            message: "the TLS policy's \(what) cannot be read; nothing was sent [TLS policy: \(policy)]")
    }

    /// 32 random hexadecimal digits: a token nobody can guess, so no request outside Courier can
    /// pick a policy by naming one.
    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    /// Calls `body` with the kit's C view of `options` (valid only during the call).
    private static func withKitPolicy(_ options: Options, token: String, _ body: (UnsafePointer<courier_tls_policy>) -> Int32) -> Int32 {
        func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
            guard let text else { return body(nil) }
            return text.withCString { body($0) }
        }
        let blob = options.caBlob ?? Data()
        return token.withCString { token in
            withOptionalCString(options.caPath) { caPath in
                withOptionalCString(options.pinned) { pinned in
                    withOptionalCString(options.certificate) { certificate in
                        withOptionalCString(options.key) { key in
                            withOptionalCString(options.password) { password in
                                blob.withUnsafeBytes { bytes in
                                    var policy = courier_tls_policy()
                                    policy.token = token
                                    policy.caInfoMode = courier_tls_ca_mode(rawValue: options.caInfoMode)
                                    policy.caInfo = nil
                                    policy.caPathMode = courier_tls_ca_mode(rawValue: options.caPathMode)
                                    policy.caPath = caPath
                                    policy.caBlob = options.caBlob == nil ? nil : bytes.baseAddress
                                    policy.caBlobLength = options.caBlob == nil ? 0 : bytes.count
                                    policy.pinnedPublicKey = pinned
                                    policy.clientCertificate = certificate
                                    policy.clientKey = key
                                    policy.keyPassword = password
                                    policy.verify = options.verify ? 1 : 0
                                    return withUnsafePointer(to: &policy) { body($0) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
