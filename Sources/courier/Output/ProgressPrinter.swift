import Foundation
import Courier

extension ProgressPrinter {
    /// Writes `text` to stderr: the one place courier writes there, so every `scheme://…` URL in
    /// its messages is masked here, by the process's one redaction (OutputRedaction.swift). Every
    /// printer `courier` makes writes through it.
    @Sendable static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(OutputRedaction.current.redactingURLs(in: text).utf8))
    }
}
