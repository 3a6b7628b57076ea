/// The command-line grammar `courier get` and `courier events` share: options before or after
/// the positional arguments, `--name=value` for long options, short flags combined (`-fsSL`),
/// `-` as a positional argument, and `--` ending the options.
///
/// It only sorts the arguments; what they mean, and which values are valid, is each command's.
struct ArgumentScanner {
    /// Options that take a value (`-o file`, `--output=file`).
    let valued: Set<String>
    /// Options that take none.
    let flags: Set<String>
    /// The help a mistake points at (`courier get --help`).
    let help: String
    /// The error for an option the command does not know (with its "did you mean").
    let unknown: (String) -> UsageError
    /// Called for each flag with the argument after it, for checks that need to see both (get's
    /// `-O file`, which wget users mean as `-o file`).
    var inspectFlag: (_ flag: String, _ next: String?) throws(UsageError) -> Void = { _, _ in }

    /// What the arguments hold, in order of appearance.
    struct Scanned {
        var positionals: [String] = []
        /// Valued options and their values, repeated ones included.
        var values: [(name: String, value: String)] = []
        /// The flags given, bundles taken apart.
        var flags: Set<String> = []
    }

    /// Sorts `arguments` into positionals, valued options and flags.
    func scan(_ arguments: [String]) throws(UsageError) -> Scanned {
        var scanned = Scanned()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                scanned.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                let name = String(argument[..<equals])
                if flags.contains(name) { throw UsageError(message: "\(name) takes no value", help: help) }
                guard valued.contains(name) else { throw unknown(name) }
                scanned.values.append((name, String(argument[argument.index(after: equals)...])))
                continue
            }
            if flags.contains(argument) {
                scanned.flags.insert(argument)
                try inspectFlag(argument, index < arguments.count ? arguments[index] : nil)
                continue
            }
            if let bundle = shortFlags(in: argument) {
                scanned.flags.formUnion(bundle)
                continue
            }
            guard valued.contains(argument) else { throw unknown(argument) }
            guard index < arguments.count else { throw UsageError(message: "\(argument) needs a value", help: help) }
            scanned.values.append((argument, arguments[index]))
            index += 1
        }
        return scanned
    }

    /// The flags in `-fsSL`, when every letter is a short flag.
    func shortFlags(in argument: String) -> [String]? {
        guard argument.count > 2, !argument.hasPrefix("--") else { return nil }
        let letters = argument.dropFirst().map { "-\($0)" }
        return letters.allSatisfy(flags.contains) ? letters : nil
    }
}

extension ArgumentScanner {
    /// `courier <command>`'s scanner: the options `commands` take, from the table; an unknown one
    /// is said with the closest known, the command's own before the TLS ones. Mistakes point at
    /// `help` (default: `courier <command> --help`).
    init(command: String, _ commands: CommandSet, help: String? = nil) {
        let (valued, flags) = (OptionTable.valued(for: commands), OptionTable.flags(for: commands))
        let help = help ?? "courier \(command) --help"
        let among = TLSOptions.afterOwn(valued.union(flags))
        self.init(valued: valued, flags: flags, help: help) { UsageError(unknown: $0, for: command, among: among, help: help) }
    }
}

extension ArgumentScanner.Scanned {
    /// Whether `-h` or `--help` was given.
    var wantsHelp: Bool { !flags.isDisjoint(with: ["-h", "--help"]) }

    /// The one positional argument of `courier <command> <url>`, unparsed.
    func url(for command: String, missing: String? = nil) throws(UsageError) -> String {
        let help = "courier \(command) --help"
        guard let text = positionals.first else { throw UsageError(message: missing ?? "\(command) needs a URL", help: help) }
        guard positionals.count == 1 else {
            throw UsageError(message: "\(command) takes one URL; unexpected '\(positionals[1])'", help: help)
        }
        return text
    }
}
