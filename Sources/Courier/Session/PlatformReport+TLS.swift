import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which ``TLSPolicy`` a URL gets, and whether this process can enforce it: what `courier doctor
/// URL` says under "TLS policy" (Docs/TLS.md).
public struct TLSPolicyReport: Sendable, Codable, Equatable {
    /// The URL, through the report's redaction.
    public var url: String
    /// The policy in a line (``TLSPolicy/description``), or `nil` when none applies: the system's
    /// authorities, full verification.
    public var policy: String?
    /// Whether the policy turns certificate verification off (``TLSPolicy/insecureWithoutVerification``).
    public var isInsecure: Bool
    /// Why a request to the URL would fail before it is sent (the kit is off, an option libcurl
    /// lacks, a file that cannot be read), or `nil` when it would go out under its policy.
    public var unenforceableReason: String?

    /// The report for `url` under `policies`: the same decision a request makes
    /// (TLSEnforcer.stamped), without sending anything.
    init(url: URL, policies: TLSPolicies, redaction: Redaction) {
        self.url = redaction.url(url)
        let policy = policies.policy(for: url)
        self.policy = policy?.description
        self.isInsecure = policy?.isInsecure ?? false
        do {
            _ = try TLSEnforcer(policies).stamped(URLRequest(url: url))
            self.unenforceableReason = nil
        } catch {
            self.unenforceableReason = redaction.redactingURLs(in: error.message)
        }
    }
}
