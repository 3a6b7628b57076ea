import Courier

/// What the options of `get`, `events`, `ws` and `doctor` hold besides their own: curl's TLS
/// options (TLSOptions.swift) and the redaction (OutputRedaction.swift), read alike for each.
protocol CommonOptions {
    var tls: TLSOptions { get set }
    var redaction: Redaction { get set }
}

/// A valued option as given (`name`: `-o`), with the table's long name for it (`key`: `--output`).
struct GivenOption {
    let name: String
    let key: String
    let value: String
}

extension CommonOptions {
    /// Reads `scanned` into `self`: the flags (`flags`: the table's long name → the field it sets;
    /// `-k` sets `tls.insecure`), then each valued option in order, the TLS and redaction ones
    /// here and the rest through `own`. Names in `skipping` are left to another reader.
    mutating func read(
        _ scanned: ArgumentScanner.Scanned, _ commands: CommandSet, help: String,
        flags: [String: WritableKeyPath<Self, Bool>], skipping: Set<String> = [], own: (inout Self, GivenOption) throws(UsageError) -> Void
    ) throws(UsageError) {
        let fields = flags.merging(["--insecure": \.tls.insecure]) { own, _ in own }
        for flag in scanned.flags {
            if let field = fields[OptionTable.key(flag, for: commands)] { self[keyPath: field] = true }
        }
        for (name, value) in scanned.values where !skipping.contains(name) {
            if TLSOptions.valued.contains(name) {
                try tls.apply(option: name, value: value, help: help)
            } else if OutputRedaction.valued.contains(name) {
                redaction = try OutputRedaction.adding(option: name, value: value, to: redaction, help: help)
            } else {
                try own(&self, GivenOption(name: name, key: OptionTable.key(name, for: commands), value: value))
            }
        }
    }
}
