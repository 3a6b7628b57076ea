import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskAttemptEvent {
    /// The TLS policy this attempt's request carries to the platform kit, or `nil` for the
    /// system's trust (or plain http). ``TLSPolicy/isInsecure`` says when verification is off:
    /// ``LoggingMonitor`` logs such an attempt as a warning.
    public var tlsPolicy: TLSPolicy? {
        request.value(forHTTPHeaderField: TLSEnforcer.headerName).flatMap(TLSRegistry.policy(forToken:))
    }
}
