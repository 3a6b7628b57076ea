import Foundation

/// `courier-bench segmented`'s command line, parsed without side effects.
///
/// ```
/// courier-bench segmented [--case capped|slow|ban|kill|nginx|all|LIST] [--size B] [--rate R] [--rounds K] [--quick]
///                         [--kills K] [--seed S] [--timeout S] [--dir DIR] [--aria2c PATH] [--courier PATH]
///                         [--nginx PATH] [--nginx-rates LIST]
/// ```
/// Sizes and rates take a whole number with an optional binary suffix: `256M`, `16M`, `1G`, `512K`.
struct SegmentedOptions: Equatable, Sendable {
    /// Which cases run.
    enum Case: String, CaseIterable, Sendable {
        case capped, slow, ban, kill, nginx
    }

    /// The cases to run, in this order.
    var cases: [Case] = Case.allCases
    /// The file's size in bytes.
    var size = 256 << 20
    /// The server's per-connection rate in bytes per second.
    var rate = 16 << 20
    /// Rounds of every configuration (ABBA order), reported as medians.
    var rounds = 3
    /// Only aria2c's best few options and Courier's automatic split (for a smoke run).
    var quick = false
    /// `kill`: how many times the `courier` command is killed before the run that finishes.
    var kills = 5
    /// `kill`: the seed of the kill moments.
    var seed: UInt64 = 24
    /// Each run's deadline in seconds.
    var timeout: Double = 300
    /// Where the files go (default: a fresh temporary directory, removed afterwards).
    var directory: String?
    /// The aria2c executable; a missing one skips aria2c's rows.
    var aria2c = "/usr/bin/aria2c"
    /// The `courier` executable for `kill` (default: next to this executable).
    var courier: String?
    /// The nginx executable for `nginx`; a missing one skips the case.
    var nginx = "/usr/sbin/nginx"
    /// `nginx`: the `limit_rate` of each run, in bytes per second per connection.
    var nginxRates = [1 << 20, 4 << 20, 16 << 20]

    static let usage = """
          courier-bench segmented [--case capped|slow|ban|kill|nginx|all|LIST] [--size B] [--rate R] [--rounds K] [--quick]
                                  [--kills K] [--seed S] [--timeout S] [--dir DIR] [--aria2c PATH] [--courier PATH]
                                  [--nginx PATH] [--nginx-rates LIST]

          segmented  Starts an in-process CourierTestServer serving one file of B bytes (default 256M, deterministic
                     bytes, strong ETag) at R bytes/s per connection (default 16M), measures loopback once (one
                     unthrottled Courier download), then runs each case and prints one RESULT line per run and
                     one per configuration with its medians (config round:median). Every file is checked byte
                     for byte; a failed run is printed with errors=1. Lines starting SKIP say what could not run.
                     capped: Courier split auto (16 running tasks per host) and 4, 8, 16 connections; aria2c
                     -x N -s N over hand-picked options. slow: slow_at=B/2&slow_factor=20, Courier auto and 4
                     against aria2c -x4 -s4. ban: max_conns=4, Courier auto. kill: the courier command
                     (courier get --split auto when it has --split) killed with SIGKILL K times (default 5) at
                     seeded moments, then run to the end; SHA-256 checked. nginx: when nginx is installed
                     (--nginx PATH, default /usr/sbin/nginx), starts one on 127.0.0.1 (a free port, its
                     files in a temporary directory) serving the same file with limit_rate at each of
                     --nginx-rates (default 1M,4M,16M): Courier auto and 16 against aria2c -x16 -s16 -k1M
                     and -x8 -s8; then limit_conn 4 at limit_rate 4M, Courier auto (r429 counts nginx's
                     503s there). --case takes one case, all (default), or a list such as capped,kill.
                     --rounds K (default 3) in ABBA order;
                     --quick: aria2c's best few options and Courier auto only. --timeout S per run (default 300).
                     Sizes and rates take K, M or G (binary).
        """

    /// The options that take no value.
    private static let flags: Set<String> = ["--quick"]
    private static let accepted: Set<String> = [
        "--case", "--size", "--rate", "--rounds", "--quick", "--kills", "--seed", "--timeout", "--dir", "--aria2c", "--courier",
        "--nginx", "--nginx-rates",
    ]

    /// The options after the word `segmented`; `nil` when help was asked for.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> SegmentedOptions? {
        guard let values = try scanOptions(arguments[...], accepted: accepted, flags: flags, command: "segmented") else {
            return nil
        }
        var options = SegmentedOptions()
        if let text = values["--case"], text != "all" {
            var cases: [Case] = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let one = Case(rawValue: String(name)) else {
                    throw BenchUsageError(
                        message: "--case takes capped, slow, ban, kill, nginx or all, or a comma-separated list, not '\(text)'")
                }
                if !cases.contains(one) { cases.append(one) }
            }
            options.cases = cases
        }
        if let text = values["--size"] { options.size = try amount("--size", text) }
        if let text = values["--rate"] { options.rate = try amount("--rate", text) }
        if let text = values["--nginx-rates"] {
            var rates: [Int] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                rates.append(try amount("--nginx-rates", String(part)))
            }
            options.nginxRates = rates
        }
        if let text = values["--rounds"] { options.rounds = try count("--rounds", text, atLeast: 1) }
        if let text = values["--kills"] { options.kills = try count("--kills", text, atLeast: 0) }
        if let text = values["--seed"] {
            guard let seed = UInt64(text) else { throw BenchUsageError(message: "--seed takes a whole number, not '\(text)'") }
            options.seed = seed
        }
        if let text = values["--timeout"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw BenchUsageError(message: "--timeout takes a number of seconds above 0, not '\(text)'")
            }
            options.timeout = seconds
        }
        options.quick = values["--quick"] != nil
        let paths = [
            ("--dir", values["--dir"]), ("--aria2c", values["--aria2c"]), ("--courier", values["--courier"]),
            ("--nginx", values["--nginx"]),
        ]
        for (option, text) in paths {
            if let text, text.isEmpty { throw BenchUsageError(message: "\(option) needs a path") }
        }
        options.directory = values["--dir"]
        options.aria2c = values["--aria2c"] ?? options.aria2c
        options.courier = values["--courier"]
        options.nginx = values["--nginx"] ?? options.nginx
        return options
    }

    /// A whole number of bytes above 0, with an optional binary suffix K, M or G.
    static func amount(_ option: String, _ text: String) throws(BenchUsageError) -> Int {
        let shifts: [Character: Int] = ["K": 10, "M": 20, "G": 30]
        var digits = Substring(text)
        var shift = 0
        if let last = digits.last, let found = shifts[Character(last.uppercased())] {
            shift = found
            digits = digits.dropLast()
        }
        guard let value = Int(digits), value > 0, value <= (1 << 40) >> shift else {
            throw BenchUsageError(message: "\(option) takes a whole number above 0 with an optional K, M or G, not '\(text)'")
        }
        return value << shift
    }

    private static func count(_ option: String, _ text: String, atLeast minimum: Int) throws(BenchUsageError) -> Int {
        guard let value = Int(text), value >= minimum else {
            throw BenchUsageError(message: "\(option) takes a whole number \(minimum) or more, not '\(text)'")
        }
        return value
    }
}
