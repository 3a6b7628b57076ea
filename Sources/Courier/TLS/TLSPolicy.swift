import Foundation

/// How Courier checks a server's TLS certificate, and which certificate it shows when asked:
/// AFNetworking's `AFSecurityPolicy` and Alamofire's trust evaluators, on Linux.
///
/// FoundationNetworking has no API for any of this on Linux (no server-trust challenge, no client
/// certificate credential, Docs/Platform.md §2.5). Courier's platform kit puts the policy on each
/// libcurl transfer itself, and libcurl enforces it during the handshake, before any request byte
/// is sent (Docs/TLS.md):
///
/// - ``trust``: the system's certificate authorities, plus (or instead of) your own PEM ones;
/// - ``pins``: SHA-256 hashes of the server's public key (SPKI), any one of which must match —
///   give several to rotate keys;
/// - ``clientIdentity``: a PEM certificate and key for servers that ask for one (mTLS).
///
/// Host-name and expiry checks always stay on. Only ``insecureWithoutVerification`` turns
/// verification off, and everything that reports a policy says so.
///
/// A policy needs the kit: when it is turned off (`COURIER_PLATFORM_FIXES=off`), inert, or libcurl
/// lacks an option the policy needs, a request the policy applies to fails before it is sent with
/// ``CourierError/Code-swift.struct/tlsPolicyUnenforceable``. It never goes out with weaker checks.
///
///     var configuration = SessionManager.Configuration()
///     configuration.tls = TLSPolicies(hosts: [
///         "api.internal": TLSPolicy(trust: .system(adding: [.file("/etc/courier/internal-ca.pem")])),
///         "payments.example.com": TLSPolicy(pins: PublicKeyPin.list("sha256//r8u…=;sha256//YLh…=")!),
///     ])
public struct TLSPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The certificate authorities a server's chain must lead to. Default: the system's.
    public var trust: Trust
    /// Public-key pins: when not empty, the server's key must match one of them.
    public var pins: [PublicKeyPin]
    /// The certificate and key shown to a server that asks for one.
    public var clientIdentity: ClientIdentity?
    /// Whether the server's certificate and host name are checked: ``Verification/full`` unless
    /// made with ``insecureWithoutVerification``.
    public private(set) var verification: Verification

    /// A policy that verifies the server fully against `trust`, and checks `pins` when given.
    public init(trust: Trust = .system, pins: [PublicKeyPin] = [], clientIdentity: ClientIdentity? = nil) {
        self.trust = trust
        self.pins = pins
        self.clientIdentity = clientIdentity
        self.verification = .full
    }

    /// The system's certificate authorities, no pins, no client certificate: what Courier does
    /// without a policy.
    public static let system = TLSPolicy()

    /// **Insecure.** Accepts any certificate for any host name: the chain, the expiry and the host
    /// name are not checked (curl's `--insecure`). Pins, if you add any, are still checked. For a
    /// test bench only; `courier doctor`, ``PlatformReport``, ``TaskAttemptEvent/tlsPolicy`` and
    /// ``LoggingMonitor`` say so wherever it applies.
    public static var insecureWithoutVerification: TLSPolicy {
        var policy = TLSPolicy()
        policy.verification = .insecurelyDisabled
        return policy
    }

    /// Whether this policy turns certificate verification off (``insecureWithoutVerification``).
    public var isInsecure: Bool { verification == .insecurelyDisabled }

    /// A line for people: trust, pins, client identity, and a loud word when verification is off.
    /// Never the key password.
    public var description: String {
        var parts: [String] = []
        if isInsecure { parts.append("INSECURE: certificate verification disabled") }
        parts.append(trust.description)
        if !pins.isEmpty { parts.append("pins " + pins.map(\.description).joined(separator: ";")) }
        if let clientIdentity { parts.append(clientIdentity.description) }
        return parts.joined(separator: ", ")
    }
}

extension TLSPolicy {
    /// Whether the server's certificate is verified.
    public enum Verification: Sendable, Hashable {
        /// The chain must lead to a trusted authority, be in its validity period, and name the host.
        case full
        /// Nothing is checked but the pins (``TLSPolicy/insecureWithoutVerification``).
        case insecurelyDisabled
    }

    /// The certificate authorities a server's chain must lead to.
    public struct Trust: Sendable, Hashable, CustomStringConvertible {
        /// Whether the system's authorities (libcurl's CA file and directory) are trusted.
        public var includesSystemAuthorities: Bool
        /// Your own authorities, in PEM. Files are read when the manager is made.
        public var authorities: [CertificateAuthority]
        /// A directory of PEM certificates named by their subject hash (OpenSSL's `c_rehash`
        /// layout), as curl's `--capath`: replaces the system's directory.
        public var directory: String?

        /// Trusts the system's authorities, your `authorities` and the certificates in
        /// `directory` (which then replaces the system's CA directory, as curl's `--capath`).
        public init(includesSystemAuthorities: Bool, authorities: [CertificateAuthority] = [], directory: String? = nil) {
            self.includesSystemAuthorities = includesSystemAuthorities
            self.authorities = authorities
            self.directory = directory
        }

        /// The system's authorities only.
        public static let system = Trust(includesSystemAuthorities: true)

        /// The system's authorities and yours (a private CA next to the public ones).
        public static func system(adding authorities: [CertificateAuthority]) -> Trust {
            Trust(includesSystemAuthorities: true, authorities: authorities)
        }

        /// Your authorities only: a certificate from a public CA is refused.
        public static func only(_ authorities: [CertificateAuthority], directory: String? = nil) -> Trust {
            Trust(includesSystemAuthorities: false, authorities: authorities, directory: directory)
        }

        /// "system trust", "system trust + CA file /x.pem", "only CA file /x.pem"…
        public var description: String {
            var sources = authorities.map(\.description)
            if let directory { sources.append("CA directory \(directory)") }
            if includesSystemAuthorities { return (["system trust"] + sources).joined(separator: " + ") }
            return sources.isEmpty ? "no trusted authority" : "only " + sources.joined(separator: " + ")
        }
    }

    /// One certificate authority (or a bundle of them), in PEM.
    public enum CertificateAuthority: Sendable, Hashable, CustomStringConvertible {
        /// A PEM file holding one or more certificates.
        case file(String)
        /// PEM text holding one or more certificates.
        case pem(Data)

        /// "CA file /path", or "CA PEM (1234 bytes)".
        public var description: String {
            switch self {
            case .file(let path): "CA file \(path)"
            case .pem(let data): "CA PEM (\(data.count) bytes)"
            }
        }
    }

    /// A PEM certificate and private key presented to a server that asks for a client certificate.
    public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
        /// The certificate (PEM file); with ``keyFile`` `nil`, the key is in this file too.
        public var certificateFile: String
        /// The private key (PEM file), when it is not in ``certificateFile``.
        public var keyFile: String?
        /// The key's password, when it is encrypted. Never printed, logged or written anywhere.
        public var keyPassword: String?

        /// A client identity from PEM files.
        public init(certificateFile: String, keyFile: String? = nil, keyPassword: String? = nil) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.keyPassword = keyPassword
        }

        /// "client certificate /c.pem, key /k.pem (password set)": the password never.
        public var description: String {
            var text = "client certificate \(certificateFile)"
            if let keyFile { text += ", key \(keyFile)" }
            if keyPassword != nil { text += " (key password set)" }
            return text
        }
    }
}

/// A public-key pin: the SHA-256 of a server's SubjectPublicKeyInfo, in base64 — what curl's
/// `--pinnedpubkey sha256//…` takes and HPKP used. Make one from a certificate with
/// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The hash, base64 (44 characters).
    public let sha256: String

    /// A pin from its base64 SHA-256; `nil` unless it decodes to 32 bytes.
    public init?(sha256 base64: String) {
        guard let bytes = Data(base64Encoded: base64), bytes.count == 32 else { return nil }
        self.sha256 = base64
    }

    /// A pin in curl's form, `sha256//BASE64`; `nil` for anything else.
    public init?(curl text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("sha256//") else { return nil }
        self.init(sha256: String(trimmed.dropFirst("sha256//".count)))
    }

    /// Pins in curl's `--pinnedpubkey` list form, `sha256//A;sha256//B`; `nil` when any is not a
    /// pin (curl's other form, a key file, is not taken: give the hash).
    public static func list(_ text: String) -> [PublicKeyPin]? {
        let pins = text.split(separator: ";", omittingEmptySubsequences: false).map { PublicKeyPin(curl: String($0)) }
        guard !pins.isEmpty, pins.allSatisfy({ $0 != nil }) else { return nil }
        return pins.compactMap { $0 }
    }

    /// `sha256//BASE64`.
    public var description: String { "sha256//\(sha256)" }
}
