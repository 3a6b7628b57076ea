/// The number checks the commands' options share, worded once: `--retries takes a whole number
/// 0 or more, not 'x'`, `--timeout takes a number of seconds above 0, not 'x'`.
extension UsageError {
    /// `value` as a whole number of at least `minimum`; a mistake names `option` and points at `help`.
    static func count(_ option: String, _ value: String, minimum: Int, help: String) throws(UsageError) -> Int {
        guard let count = Int(value), count >= minimum else {
            throw UsageError(message: "\(option) takes a whole number \(minimum) or more, not '\(value)'", help: help)
        }
        return count
    }

    /// `value` as finite seconds above 0 (at most 10^9), or 0 or more (at most `maximum`) when `zero`.
    static func seconds(
        _ option: String, _ value: String, zero: Bool = false, maximum: Double = 1e9, help: String
    ) throws(UsageError) -> Double {
        guard let seconds = Double(value), seconds.isFinite, zero ? seconds >= 0 : seconds > 0, seconds <= maximum else {
            throw UsageError(message: "\(option) takes a number of seconds \(zero ? "0 or more" : "above 0"), not '\(value)'", help: help)
        }
        return seconds
    }
}

extension UsageError {
    /// `unknown option '--retrie' for get; did you mean --retries?`: the closest of `names` (long
    /// options; a short one is too short to guess from).
    init(unknown name: String, for command: String, among names: [String], help: String) {
        var message = "unknown option '\(name)' for \(command)"
        if name.count > 2, let closest = Suggestion.closest(to: name, among: names) { message += "; did you mean \(closest)?" }
        self.init(message: message, help: help)
    }
}
