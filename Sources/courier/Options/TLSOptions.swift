import Foundation
import Courier

/// curl's TLS options, with curl's syntax and meaning, as `get`, `events`, `ws` and `doctor` take them:
/// one ``TLSPolicy`` for every host the command reaches (Docs/TLS.md, Docs/CommandLine.md "TLS").
struct TLSOptions: Equatable {
    var caFile: String?
    var caDirectory: String?
    var pins: [PublicKeyPin]?
    var certificate: String?
    var key: String?
    /// Never printed.
    var password: String?
    var insecure = false

    static let valued = OptionTable.tls(valued: true)
    static let flags = OptionTable.tls(valued: false)

    /// A command's long option names for "did you mean", sorted, with the TLS ones after its own:
    /// ties go to the earlier candidate (Suggestion.swift), and a mistyped `--retry` means
    /// `--retries`, not `--cert`.
    static func afterOwn(_ names: Set<String>) -> [String] {
        let long = names.filter { $0.hasPrefix("--") }
        let tls = long.intersection(valued.union(flags))
        return long.subtracting(tls).sorted() + tls.sorted()
    }

    /// Whether any TLS option was given.
    var isEmpty: Bool { self == TLSOptions() }

    /// Takes `option` (one of ``valued``) with `value`; mistakes point at `help`.
    mutating func apply(option: String, value: String, help: String) throws(UsageError) {
        guard !value.isEmpty else { throw UsageError(message: "\(option) needs a value", help: help) }
        switch option {
        case "--cacert": caFile = value
        case "--capath": caDirectory = value
        case "--pinnedpubkey":
            guard let list = PublicKeyPin.list(value) else {
                throw UsageError(
                    message: "--pinnedpubkey takes sha256//BASE64 pins separated by ';' (the SHA-256 of the server's public key; "
                        + "curl's key-file form is not taken), not '\(value)'",
                    help: help)
            }
            pins = list
        case "--cert":
            let (file, given) = Self.splitCertificate(value)
            certificate = file
            if let given { password = given }
        case "--key": key = value
        default: password = value  // --pass
        }
    }

    /// Checks what only the whole set can tell.
    func validated(help: String) throws(UsageError) -> TLSOptions {
        if key != nil, certificate == nil {
            throw UsageError(message: "--key is the key of a client certificate: give --cert too", help: help)
        }
        if password != nil, certificate == nil {
            throw UsageError(message: "--pass is the password of a client key: give --cert too", help: help)
        }
        return self
    }

    /// The policy the options make, or `nil` when none was given (the system's trust).
    var policy: TLSPolicy? {
        guard !isEmpty else { return nil }
        var policy = insecure ? TLSPolicy.insecureWithoutVerification : TLSPolicy()
        policy.trust = TLSPolicy.Trust(
            includesSystemAuthorities: true, authorities: caFile.map { [.file($0)] } ?? [], directory: caDirectory)
        policy.pins = pins ?? []
        policy.clientIdentity = certificate.map { TLSPolicy.ClientIdentity(certificateFile: $0, keyFile: key, keyPassword: password) }
        return policy
    }

    /// The policies a command's manager gets: the one policy for every host.
    var policies: TLSPolicies { TLSPolicies(default: policy) }

    /// The line a command prints on stderr when verification is off, or `nil`.
    var warning: String? {
        insecure ? "warning: --insecure: server certificates and host names are NOT verified" : nil
    }

    /// ``policies``, after saying on stderr (even with `-q`) that verification is off, when it is:
    /// what each command's manager is made with.
    func announced() -> TLSPolicies {
        if let warning { ProgressPrinter.writeToStandardError("courier: \(warning)\n") }
        return policies
    }

    /// curl's `--cert FILE:PASSWORD`: the first `:` not escaped as `\:` ends the file name.
    static func splitCertificate(_ value: String) -> (file: String, password: String?) {
        var file = ""
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            let next = value.index(after: index)
            if character == "\\", next < value.endIndex, value[next] == ":" {
                file.append(":")
                index = value.index(after: next)
                continue
            }
            if character == ":" { return (file, String(value[next...])) }
            file.append(character)
            index = next
        }
        return (file, nil)
    }
}
