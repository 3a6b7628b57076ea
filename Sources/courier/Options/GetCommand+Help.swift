extension GetCommand {
    /// `courier get --help`: what the command does, its options, and its exit codes. Also the
    /// body of `courier --help`.
    static let help = """
        courier get <url> [options]
        courier get -i <file> [options]

        Downloads <url> to a file, like wget (or curl -fLO): the name comes from the server or the
        URL, an existing file is never overwritten, and a download that stops — Ctrl-C, kill, a
        crash, a lost connection — continues where it stopped when you run the same command again
        (if the server sends an ETag or Last-Modified). Progress, retries and messages go to stderr;
        on success stdout gets only the saved file's absolute path, or with -o - the body.

        Output:
        \(OptionTable.help(for: [.get], in: .output))

        Reliability:
        \(OptionTable.help(for: [.get], in: .reliability))

        Speed:
        \(OptionTable.help(for: [.get], in: .speed))

        Conditional downloads (curl's options and meaning):
        \(OptionTable.help(for: [.get], in: .conditional))

        A list of URLs (courier get -i FILE [options]; docs: Docs/CommandLine.md):
        \(OptionTable.help(for: [.queue], in: .list))

        Requests:
        \(OptionTable.help(for: [.get], in: .requests))

        TLS (curl's options and meaning; for every host, redirects included; Docs/TLS.md):
        \(OptionTable.help(for: [.get], in: .tls))

        Accepted from curl and wget, for what courier does anyway (they change nothing):
          -O, --remote-name  -L, --location  -f, --fail  -C -, -c, --continue  -S, --show-error
          Short flags combine: -fsSL.

        Not available:
        \(OptionTable.help(for: [.get], in: .notAvailable))

        Exit codes: 0 success, 1 other failure, 2 usage error, 3 network error (no route,
        connection, TLS, a TLS option that cannot be enforced, timeout, --max-time, invalid response), 4 HTTP error status, 5 integrity check failed
        (--sha256, length), 6 file error (output exists, cannot write), 130 interrupted by SIGINT
        (Ctrl-C), 143 stopped by SIGTERM (both keep the partial download for the next run, except
        with -o -, where the bytes already written stay on stdout).
        """
}
