import Foundation
import Courier
import CourierSupport

/// The one ``Redaction`` of everything `courier` prints, decided once per process from
/// `--redact-header` and `--redact-param`, and applied where output leaves it: every write to stderr
/// (``ProgressPrinter/writeToStandardError(_:)``), the URLs courier formats (``GetCommand/displayURL(_:)``),
/// `-v`'s headers and the doctor's report (Docs/CommandLine.md, "Secrets in what courier prints").
enum OutputRedaction {
    private static let chosen = Locked(Redaction.default)

    /// The redaction in force: `Redaction.default` until ``use(_:)``.
    static var current: Redaction { chosen.current }

    /// Makes `redaction` the one for this process's output.
    static func use(_ redaction: Redaction) { chosen.set(redaction) }

    // MARK: - The options

    /// The options that add names to the redaction; every command takes both.
    static let valued: Set<String> = ["--redact-header", "--redact-param"]

    /// `redaction` with the name given to `option` (one of ``valued``) added. A header name must
    /// be an HTTP token; a parameter name is compared with each parameter's percent-decoded name,
    /// in any case, so it is given decoded (`--redact-param session_id`).
    static func adding(option: String, value: String, to redaction: Redaction, help: String) throws(UsageError) -> Redaction {
        switch option {
        case "--redact-header":
            guard HTTPToken.isToken(value) else {
                throw UsageError(message: "--redact-header takes a header name, not '\(value)'", help: help)
            }
            return redaction.adding(headers: [value])
        default:  // --redact-param
            guard !value.isEmpty, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw UsageError(message: "--redact-param takes a query parameter name, not \(value.debugDescription)", help: help)
            }
            return redaction.adding(queryParameters: [value])
        }
    }
}
