import Foundation
import Courier

extension DownloadList {
    /// `line` taken (``DownloadList/take(_:)``), a mistake as courier reports it: a usage error
    /// naming the input and the line (exit 2).
    mutating func take(_ line: InputLineBuffer.Line, from source: String) throws(UsageError) -> Entry? {
        do {
            return try take(line)
        } catch {
            throw UsageError(get: "\(source), \(error)")
        }
    }

    /// `line` parsed again (``DownloadList/parse(_:directory:)``), with courier's usage error.
    static func parse(_ line: InputLineBuffer.Line, directory: URL, source: String) throws(UsageError) -> Entry? {
        do {
            return try parse(line, directory: directory)
        } catch {
            throw UsageError(get: "\(source), \(error)")
        }
    }
}
