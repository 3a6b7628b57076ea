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

extension InputSpool.Reader {
    /// The next line, with courier's errors: a line over the limit is a usage error naming it
    /// (exit 2), an input or spool that cannot be read or kept a ``GetFailure`` (exit 6).
    mutating func nextLine(waitingUpTo milliseconds: Int32) throws -> Next {
        do {
            return try next(waitingUpTo: milliseconds)
        } catch let error as InputLineBuffer.LineTooLong {
            throw InputSpool.tooLong(error, in: spool.name)
        } catch let error as CourierError {
            throw GetFailure(ExitCode.fileSystem, error.message)
        }
    }
}
