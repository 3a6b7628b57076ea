import Foundation
import Courier

/// How far a streaming `courier get -o -` has got on stdout: the library's ``StreamSink/Record``,
/// kept in the supervisor's private staging directory (``GetCommand/stagingVariable``) so that a
/// child killed by a trap can be followed by one that continues exactly after the bytes already
/// written — or by a clear failure when that cannot be proven.
typealias StandardOutputRecord = StreamSink.Record

extension StreamSink.Record {
    /// The record's place in a staging directory.
    static func file(in staging: URL) -> URL {
        staging.appendingPathComponent("stdout.record")
    }

    /// The record in `staging`, if there is a readable one.
    static func read(in staging: URL) -> StandardOutputRecord? {
        read(from: file(in: staging))
    }

    /// What the stderr lines say about stdout after a failure: `; nothing was written to stdout`,
    /// or how much was and that it is incomplete.
    var incompleteSuffix: String {
        if writing > 0 {
            return "; the output is incomplete: between \(Self.amount(written)) and \(Self.amount(written + writing)) "
                + "were written to stdout"
        }
        return GetCommand.incompleteSuffix(written: written)
    }

    /// `97.7 KiB (100000 bytes)`: the exact count, for `tail -c` and friends, and the readable one.
    static func amount(_ bytes: Int64) -> String {
        bytes == 1 ? "1 byte" : bytes < 1024 ? "\(bytes) bytes" : "\(ProgressFormat.bytes(bytes)) (\(bytes) bytes)"
    }
}
