import Courier

extension InputSpool {
    /// The spool of `-i`'s input (the library's `InputSpool`), a failure as courier reports it (exit 6).
    static func opened(source: Int32, name: String, path: String) throws(GetFailure) -> InputSpool {
        do {
            return try InputSpool(source: source, name: name, path: path)
        } catch {
            throw GetFailure(ExitCode.fileSystem, error.message)
        }
    }

    /// A line of the input `name` over the limit, as courier reports it: a usage error naming it (exit 2).
    static func tooLong(_ error: InputLineBuffer.LineTooLong, in name: String) -> UsageError {
        UsageError(
            get: "\(name), line \(error.line): longer than \(InputLineBuffer.maximumLineBytes) bytes, "
                + "the most a line may have; no URL is that long")
    }
}
