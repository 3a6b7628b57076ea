/// Which commands take an option. `queue` is `courier get -i`: options only a list of URLs takes.
struct CommandSet: OptionSet, Sendable {
    let rawValue: Int
    static let get = CommandSet(rawValue: 1 << 0)
    static let queue = CommandSet(rawValue: 1 << 1)
    static let events = CommandSet(rawValue: 1 << 2)
    static let doctor = CommandSet(rawValue: 1 << 3)
    static let serve = CommandSet(rawValue: 1 << 4)
    static let ws = CommandSet(rawValue: 1 << 5)
    /// `courier queue status`.
    static let queueStatus = CommandSet(rawValue: 1 << 6)
}

/// Where an option's help appears: the headings of `courier get --help`, `events`' and `ws`' one
/// list each, TLS.
enum HelpSection: Sendable {
    case output, reliability, speed, conditional, list, requests, tls, notAvailable, events, ws
}

/// One option of the command line, declared once: its spellings, the value it takes, the
/// commands that take it, and its help. The scanners' sets, "did you mean" and the option lines
/// of `--help` are all made from ``OptionTable/all``, so they cannot disagree.
struct OptionSpec: Sendable {
    /// Every spelling, short first (`-o`, `--output`); none for a line that is help only.
    let names: [String]
    /// What the value is called in help (`<file>`); `nil` for a flag.
    let value: String?
    let commands: CommandSet
    /// The heading it is listed under; `nil` for an option the help does not list on a line of its own.
    let section: HelpSection?
    /// The help's right column, one line per line.
    let help: String
    /// The left column, when it is not the names and the value (`-o -`).
    let display: String?

    init(_ names: [String], _ value: String?, _ commands: CommandSet, _ section: HelpSection? = nil, _ help: String = "") {
        (self.names, self.value, self.commands, self.section, self.help, display) = (names, value, commands, section, help, nil)
    }

    /// A line of help that is not an option of its own (`-o -`, what is not available).
    init(display: String, commands: CommandSet, section: HelpSection, _ help: String) {
        (names, value, self.commands, self.section, self.help, self.display) = ([], nil, commands, section, help, display)
    }

    /// The option's lines in `--help`: the left column padded to 28, the help after it.
    var helpLines: String {
        let left = display ?? (names.joined(separator: ", ") + (value.map { " " + $0 } ?? ""))
        let gap = String(repeating: " ", count: max(1, 28 - left.count))
        return help.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            (index == 0 ? "  " + left + gap : String(repeating: " ", count: 30)) + line
        }.joined(separator: "\n")
    }
}

/// Every option of every command, in the order `--help` lists them (curl's `tool_getparam.c`
/// keeps one such table).
enum OptionTable {
    private static let tls: CommandSet = [.get, .events, .doctor, .ws]

    static let all: [OptionSpec] = [
        OptionSpec(
            ["-o", "--output"], "<file>", [.get], .output,
            """
            Save as <file> (relative to the current directory). Default:
            the Content-Disposition name, else the URL's last path
            segment, made safe, in the current directory.
            """),
        OptionSpec(
            display: "-o -", commands: [.get], section: .output,
            """
            Write the body to stdout instead, each byte as it arrives.
            Whatever happens, stdout holds a prefix of the true body,
            never a byte twice: a lost connection is continued with
            Range (it needs an ETag or Last-Modified) or the command
            fails, saying the output is incomplete and how many bytes
            it holds; --sha256 is checked at the end (exit 5: do not
            trust the output). Resuming does not apply to a pipe: the
            next run starts over.
            """),
        OptionSpec(
            ["--whole"], nil, [.get], .output,
            """
            With -o -: write nothing until the whole body is in and
            verified (staged in a private temporary file), so a failed
            or interrupted download writes nothing to stdout. For
            pipelines that must never see a partial body.
            """),
        OptionSpec(
            ["--force"], nil, [.get], .output,
            """
            Replace an existing file (default: never overwrite).
            """),
        OptionSpec(
            ["-q", "--quiet", "-s", "--silent"], nil, [.get], .output,
            """
            No progress, retry lines or summary; errors still.
            """),
        OptionSpec(
            ["-v", "--verbose"], nil, [.get], .output,
            """
            Print the request and response heads (secrets masked)
            and the request's timeline on stderr, curl's way.
            """),
        OptionSpec(
            ["--redact-header"], "<name>", [.get, .doctor], .output,
            """
            Mask this header's value in -v too (repeatable). Masked by
            default: Authorization, Proxy-Authorization, Cookie,
            Set-Cookie, X-Api-Key, Api-Key, X-Amz-Security-Token,
            X-Auth-Token and others (Docs/CommandLine.md).
            """),
        OptionSpec(
            ["--redact-param"], "<name>", [.get, .doctor], .output,
            """
            Mask this query parameter's value in every URL printed
            (repeatable). Masked by default: token, access_token, sig,
            signature, key, X-Amz-Signature, X-Goog-Signature and others;
            a URL's user info is always masked.
            """),
        OptionSpec(
            ["--retries"], "<n>", [.get], .reliability,
            """
            Continue by itself after up to <n> transient failures
            (connection lost, timeout, 408/429/5xx; default 3), saying
            so on stderr. A Retry-After over 120 s is not waited for:
            the command stops and says what the server asked.
            """),
        OptionSpec(
            ["--max-time"], "<s>", [.get], .reliability,
            """
            Give up after <s> seconds in all (exit 3), keeping the bytes
            for the next run. A server that trickles a byte at a time is
            never silent, so only this ends it.
            """),
        OptionSpec(
            ["--timeout"], "<s>", [.get], .reliability,
            """
            Fail an attempt (then retry) after <s> seconds without a byte,
            connecting included (whole seconds; default 60).
            """),
        OptionSpec(
            ["--wait-for-network"], "<s>", [.get], .reliability,
            """
            When this machine has no route to the host (no network, no
            default route), wait up to <s> seconds for one instead of
            failing at once; without it that fails at once (exit 3),
            saying the network, not the server, was the problem.
            """),
        OptionSpec(
            ["--sha256"], "<hex>", [.get], .reliability,
            """
            The file's expected SHA-256 (64 hex digits); on a mismatch
            nothing is saved (with -o -: checked at the end, exit 5).
            """),
        OptionSpec(
            ["--accept-unverified"], nil, [.get], .reliability,
            """
            Save a body nothing can prove complete (the server gzips
            although asked not to, or gives no length), with a warning;
            by default it is refused (exit 5).
            """),
        OptionSpec(
            ["--split"], "<n>|auto|auto:<n>", [.get], .speed,
            """
            Fetch the file over <n> connections at once (1 to 64), or
            auto: as many as raise the speed, up to 16 (auto:<n>: up
            to <n>). Each is a Range request checked against the
            file's version; a server without ranges or a strong ETag
            gets one connection. Default: one. Not with -o - (use
            -o - --whole). With -i, for each new line's download,
            within --per-host. Long option only: -s is --silent.
            """),
        OptionSpec(
            ["-z", "--time-cond"], "<date|file>", [.get], .conditional,
            """
            Ask only for a copy modified after <date>, or after <file>'s
            modification time when <date> is not a date
            (If-Modified-Since); -<date> asks for one not modified since
            (If-Unmodified-Since). Neither a date nor a file: a warning,
            and no condition. A server that sends the body anyway with
            a Last-Modified that fails the condition is treated as a 304.
            """),
        OptionSpec(
            ["--etag-compare"], "<file>", [.get], .conditional,
            """
            Send the ETag in <file> (its first line) as If-None-Match;
            a missing or empty file sends "" (no copy matches).
            """),
        OptionSpec(
            ["--etag-save"], "<file>", [.get], .conditional,
            """
            Write the response's ETag (with its quotes) to <file> once
            the file is saved (or from a 304); created empty when there
            is none. Use the same file as --etag-compare to refresh it.
            When the server answers 304 Not Modified, nothing is written
            and the exit status is 0; a newer copy replaces the output
            file (the condition stands in for --force). One URL only.
            """),
        OptionSpec(
            ["--cache"], "<dir>", [.get], .conditional,
            """
            Fetch through a disk response cache in <dir> (RFC 9111, as
            a browser's): a fresh stored copy answers without a
            request, a stale one is revalidated. Bodies up to 256 MiB
            are stored; with -o -, written once whole and verified.
            Not with --split or -i.
            """),
        OptionSpec(
            ["-i", "--input-file"], "<file>", [.queue], .list,
            """
            Download every URL in <file> (- for stdin): one per line,
            optionally followed by sha256=<hex> and out=<name>; # starts
            a comment; at most 64 KiB a line. Read as it comes: each
            download starts when its line is read. Run the same command
            again to continue what is unfinished; finished files are
            not fetched again.
            """),
        OptionSpec(
            ["-P", "--directory-prefix"], "<d>", [.queue], .list,
            """
            Save the files in <d> (default: the current directory).
            """),
        OptionSpec(
            ["--state"], "<dir>", [.queue], .list,
            """
            The queue's journal and partial files (default:
            <d>/.courier-queue).
            """),
        OptionSpec(
            ["--queue"], "<postgres://…>", [.queue, .queueStatus], .list,
            """
            Share the list with other workers through a PostgreSQL
            database (libpq's connection string; the password from
            PGPASSWORD, ~/.pgpass or a service file). Each runs the
            same command: each item is fetched and published once, by
            one worker; a worker that dies is taken over. The string
            is never printed. See courier queue status.
            """),
        OptionSpec(
            ["--parallel"], "<n>", [.queue], .list,
            """
            Downloads at once (default 4).
            """),
        OptionSpec(
            ["--per-host"], "<n>", [.queue], .list,
            """
            Connections at once per host (default 2): a download
            holds one, a --split one up to its split.
            Exit status: 0 when all completed, else the worst of the
            failures (5, 6, 4, 3, 1), listed on stderr.
            """),
        OptionSpec(
            ["-H", "--header"], "'Name: value'", [.get], .requests,
            """
            Add a request header (repeatable). Never written to disk, and
            not sent to another origin a redirect leads to, unless
            --location-trusted.
            """),
        OptionSpec(
            ["--location-trusted"], nil, [.get], .requests,
            """
            Send the -H headers across redirects to other hosts too.
            """),
        OptionSpec(
            display: "--connect-timeout", commands: [.get], section: .notAvailable,
            """
            FoundationNetworking on Linux sets no libcurl connect timeout
            and offers no way to set one. Connecting counts as silence:
            --timeout bounds it, and --max-time the whole download.
            """),
        OptionSpec(
            ["-H", "--header"], "'Name: value'", [.events], .events,
            """
            Add a request header (repeatable; not sent to another origin a
            redirect leads to, unless --location-trusted).
            """),
        OptionSpec(["--location-trusted"], nil, [.events], .events, "Send the -H headers across redirects to other hosts too."),
        OptionSpec(
            ["--redact-param"], "<name>", [.events], .events,
            """
            Mask this query parameter's value in every URL printed
            (repeatable), as token, sig, X-Amz-Signature and the other
            defaults are (Docs/CommandLine.md).
            """),
        OptionSpec(
            ["--redact-header"], "<name>", [.events], .events,
            """
            Mask this header's value (repeatable); accepted as by get,
            though events prints no headers.
            """),
        OptionSpec(
            ["--last-event-id"], "<id>", [.events], .events,
            """
            Start after this event: the first request sends it as
            Last-Event-ID.
            """),
        OptionSpec(
            ["--max-reconnects"], "<n>", [.events], .events,
            """
            Give up after <n> failed reconnections in a row (no
            connection, or one that ended before an event; default 5).
            0: never reconnect.
            """),
        OptionSpec(
            ["--retry-delay"], "<s>", [.events], .events,
            """
            Seconds to wait before reconnecting when the server sent no
            retry: (default 3; at least 0.5).
            """),
        OptionSpec(
            ["--idle-timeout"], "<s>", [.events], .events,
            """
            Drop and remake a connection silent for <s> seconds
            (comments count as traffic; waiting for the response
            head counts too). Default: no limit.
            """),
        OptionSpec(
            ["-n", "--max-events"], "<n>", [.events], .events,
            """
            Stop after <n> events (exit 0).
            """),
        OptionSpec(
            ["-s", "--silent", "-q", "--quiet"], nil, [.events], .events,
            """
            No reconnection lines; errors still.
            """),
        OptionSpec(
            ["--binary"], nil, [.ws], .ws,
            """
            Send each line of stdin as a binary message (its bytes,
            without the newline) instead of a text message.
            """),
        OptionSpec(
            ["--hex"], nil, [.ws], .ws,
            """
            Print each binary message received as lowercase hex (two
            digits a byte) instead of its bytes as they are.
            """),
        OptionSpec(
            ["-n", "--count"], "<n>", [.ws], .ws,
            """
            Exit after <n> messages are received: close with 1000,
            wait for the server's Close frame, exit 0.
            """),
        OptionSpec(
            ["--ping"], "<s>", [.ws], .ws,
            """
            Send a ping every <s> seconds; a server silent for a whole
            interval after one is dead (exit 3 within 2 x <s>).
            """),
        OptionSpec(
            ["--protocol"], "<name>", [.ws], .ws,
            """
            Offer this subprotocol (Sec-WebSocket-Protocol; repeatable,
            in order of preference); the server must choose one of
            them or none.
            """),
        OptionSpec(
            ["--max-message"], "<bytes>", [.ws], .ws,
            """
            The largest message accepted from the server, and the
            longest line of stdin sent (default 1048576). A larger
            message closes with 1009 (exit 1).
            """),
        OptionSpec(
            ["-H", "--header"], "'Name: value'", [.ws], .ws,
            """
            Add a header to the handshake request (repeatable).
            """),
        OptionSpec(
            ["--redact-param"], "<name>", [.ws], .ws,
            """
            Mask this query parameter's value in every URL printed
            (repeatable), as token, sig and the other defaults are.
            """),
        OptionSpec(
            ["--redact-header"], "<name>", [.ws], .ws,
            """
            Mask this header's value (repeatable); accepted as by get,
            though ws prints no headers.
            """),
        OptionSpec(["--cacert"], "<file>", tls, .tls, "Also trust the PEM CA certificates in <file>."),
        OptionSpec(["--capath"], "<dir>", tls, .tls, "Trust the hashed CA directory <dir> instead of the system's."),
        OptionSpec(
            ["--pinnedpubkey"], "<pins>", tls, .tls,
            """
            sha256//BASE64[;sha256//…]: the server's public key must
            match one (checked before anything is sent).
            """),
        OptionSpec(["--cert"], "<file>[:<password>]", tls, .tls, "Client certificate (PEM); its key too unless --key."),
        OptionSpec(["--key"], "<file>", tls, .tls, "The client certificate's key (PEM)."),
        OptionSpec(["--pass"], "<password>", tls, .tls, "The key's password (never printed)."),
        OptionSpec(
            ["-k", "--insecure"], nil, tls, .tls,
            """
            Do not verify the server's certificate (pins still
            apply). Says so on stderr.
            """),
        // Not in the option lines: asking for help, the spellings curl and wget users type for
        // what courier does anyway (listed in a line of their own), doctor's and serve's own.
        OptionSpec(["-h", "--help"], nil, [.get, .events, .doctor, .ws]),
        OptionSpec(["-O", "--remote-name"], nil, [.get]),
        OptionSpec(["-L", "--location"], nil, [.get]),
        OptionSpec(["-f", "--fail"], nil, [.get]),
        OptionSpec(["-c", "--continue"], nil, [.get]),
        OptionSpec(["-C", "--continue-at"], "-", [.get]),
        OptionSpec(["-S", "--show-error"], nil, [.get]),
        OptionSpec(["--json"], nil, [.doctor]),
        OptionSpec(["--port"], "<n>", [.serve]),
        OptionSpec(["--root"], "<dir>", [.serve]),
    ]

    /// The options `commands` take that need a value.
    static func valued(for commands: CommandSet) -> Set<String> {
        Set(all.filter { $0.value != nil && !$0.commands.isDisjoint(with: commands) }.flatMap(\.names))
    }

    /// The options `commands` take without a value.
    static func flags(for commands: CommandSet) -> Set<String> {
        Set(all.filter { $0.value == nil && !$0.commands.isDisjoint(with: commands) }.flatMap(\.names))
    }

    /// The long name the table gives `name` among the options `commands` take (`-o` → `--output`):
    /// what the commands' readers switch on, so each spelling is listed once, here.
    static func key(_ name: String, for commands: CommandSet) -> String {
        let spec = all.first { $0.names.contains(name) && !$0.commands.isDisjoint(with: commands) }
        return spec?.names.first { $0.hasPrefix("--") } ?? name
    }

    /// The TLS options (TLSOptions.swift): with a value, or without.
    static func tls(valued: Bool) -> Set<String> {
        Set(all.filter { $0.section == .tls && ($0.value != nil) == valued }.flatMap(\.names))
    }

    /// The option lines `commands` list under `section`, in the table's order.
    static func help(for commands: CommandSet, in section: HelpSection) -> String {
        all.filter { $0.section == section && !$0.commands.isDisjoint(with: commands) }.map(\.helpLines)
            .joined(separator: "\n")
    }
}
