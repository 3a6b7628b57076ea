import Foundation

/// A small parser for `--name value` options; no positional arguments.
struct OptionParser {
    private var values: [String: String] = [:]

    init(_ arguments: [String], valued: Set<String>) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard valued.contains(argument) else {
                let closest = Suggestion.closest(to: argument, among: valued.sorted())
                throw UsageError(message: "unknown option '\(argument)'" + (closest.map { "; did you mean \($0)?" } ?? ""))
            }
            guard index + 1 < arguments.count else { throw UsageError(message: "\(argument) needs a value") }
            values[argument] = arguments[index + 1]
            index += 2
        }
    }

    func string(_ name: String) -> String? { values[name] }

    func port(_ name: String) throws -> UInt16 {
        guard let text = values[name] else { return 0 }
        guard let port = UInt16(text) else { throw UsageError(message: "\(name) takes a port number 0-65535, not '\(text)'") }
        return port
    }
}
