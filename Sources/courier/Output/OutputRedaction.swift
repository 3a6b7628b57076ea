import Foundation
import Courier
import CourierSupport

/// The one ``Redaction`` of everything `courier` prints for people.
///
/// Decided once per process, before the command prints anything of its own: `Redaction.default`
/// plus the names given with `--redact-header` and `--redact-param` (``adding(option:value:to:help:)``).
/// Then applied where output leaves the process, not at each message:
///
/// - every write to stderr — error lines, retry and reconnection lines, `get -i`'s failure
///   summary, `-v`'s heads and timeline, usage errors — passes through
///   ``Redaction/redactingURLs(in:)`` in ``ProgressPrinter/writeToStandardError(_:)``;
/// - a URL courier formats itself goes through ``Redaction/url(_:)`` (``GetCommand/displayURL(_:)``),
///   which masks a value whole even where free text could not tell where it ends;
/// - `-v`'s header values go through its header lists (``VerboseMonitor``);
/// - `courier doctor` builds its report with it (text and `--json` alike).
///
/// A process has one stderr, so one rule for it: a process-wide value rather than a parameter
/// handed to every function that might, one day, print a URL.
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
