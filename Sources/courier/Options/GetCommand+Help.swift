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
          -o, --output <file>         Save as <file> (relative to the current directory). Default:
                                      the Content-Disposition name, else the URL's last path
                                      segment, made safe, in the current directory.
          -o -                        Write the body to stdout instead, each byte as it arrives.
                                      Whatever happens, stdout holds a prefix of the true body,
                                      never a byte twice: a lost connection is continued with
                                      Range (it needs an ETag or Last-Modified) or the command
                                      fails, saying the output is incomplete and how many bytes
                                      it holds; --sha256 is checked at the end (exit 5: do not
                                      trust the output). Resuming does not apply to a pipe: the
                                      next run starts over.
          --whole                     With -o -: write nothing until the whole body is in and
                                      verified (staged in a private temporary file), so a failed
                                      or interrupted download writes nothing to stdout. For
                                      pipelines that must never see a partial body.
          --force                     Replace an existing file (default: never overwrite).
          -q, --quiet, -s, --silent   No progress, retry lines or summary; errors still.
          -v, --verbose               Print the request and response heads (secrets masked)
                                      and the request's timeline on stderr, curl's way.
          --redact-header <name>      Mask this header's value in -v too (repeatable). Masked by
                                      default: Authorization, Proxy-Authorization, Cookie,
                                      Set-Cookie, X-Api-Key, Api-Key, X-Amz-Security-Token,
                                      X-Auth-Token and others (Docs/CommandLine.md).
          --redact-param <name>       Mask this query parameter's value in every URL printed
                                      (repeatable). Masked by default: token, access_token, sig,
                                      signature, key, X-Amz-Signature, X-Goog-Signature and others;
                                      a URL's user info is always masked.

        Reliability:
          --retries <n>               Continue by itself after up to <n> transient failures
                                      (connection lost, timeout, 408/429/5xx; default 3), saying
                                      so on stderr. A Retry-After over 120 s is not waited for:
                                      the command stops and says what the server asked.
          --max-time <s>              Give up after <s> seconds in all (exit 3), keeping the bytes
                                      for the next run. A server that trickles a byte at a time is
                                      never silent, so only this ends it.
          --timeout <s>               Fail an attempt (then retry) after <s> seconds without a byte,
                                      connecting included (whole seconds; default 60).
          --wait-for-network <s>      When this machine has no route to the host (no network, no
                                      default route), wait up to <s> seconds for one instead of
                                      failing at once; without it that fails at once (exit 3),
                                      saying the network, not the server, was the problem.
          --sha256 <hex>              The file's expected SHA-256 (64 hex digits); on a mismatch
                                      nothing is saved (with -o -: checked at the end, exit 5).
          --accept-unverified         Save a body nothing can prove complete (the server gzips
                                      although asked not to, or gives no length), with a warning;
                                      by default it is refused (exit 5).

        Speed:
          --split <n>|auto|auto:<n>   Fetch the file over <n> connections at once (1 to 64), or
                                      auto: as many as raise the speed, up to 16 (auto:<n>: up
                                      to <n>). Each is a Range request checked against the
                                      file's version; a server without ranges or a strong ETag
                                      gets one connection. Default: one. Not with -o - (use
                                      -o - --whole). With -i, for each new line's download,
                                      within --per-host. Long option only: -s is --silent.

        Conditional downloads (curl's options and meaning):
          -z, --time-cond <date|file> Ask only for a copy modified after <date>, or after <file>'s
                                      modification time when <date> is not a date
                                      (If-Modified-Since); -<date> asks for one not modified since
                                      (If-Unmodified-Since). Neither a date nor a file: a warning,
                                      and no condition. A server that sends the body anyway with
                                      a Last-Modified that fails the condition is treated as a 304.
          --etag-compare <file>       Send the ETag in <file> (its first line) as If-None-Match;
                                      a missing or empty file sends "" (no copy matches).
          --etag-save <file>          Write the response's ETag (with its quotes) to <file> once
                                      the file is saved (or from a 304); created empty when there
                                      is none. Use the same file as --etag-compare to refresh it.
                                      When the server answers 304 Not Modified, nothing is written
                                      and the exit status is 0; a newer copy replaces the output
                                      file (the condition stands in for --force). One URL only.
          --cache <dir>               Fetch through a disk response cache in <dir> (RFC 9111, as
                                      a browser's): a fresh stored copy answers without a
                                      request, a stale one is revalidated. The body is held in
                                      memory (at most 256 MiB) and written whole; a cut body
                                      starts over. Not with --split or -i.

        A list of URLs (courier get -i FILE [options]; docs: Docs/CommandLine.md):
          -i, --input-file <file>     Download every URL in <file> (- for stdin): one per line,
                                      optionally followed by sha256=<hex> and out=<name>; # starts
                                      a comment; at most 64 KiB a line. Read as it comes: each
                                      download starts when its line is read. Run the same command
                                      again to continue what is unfinished; finished files are
                                      not fetched again.
          -P, --directory-prefix <d>  Save the files in <d> (default: the current directory).
          --state <dir>               The queue's journal and partial files (default:
                                      <d>/.courier-queue).
          --parallel <n>              Downloads at once (default 4).
          --per-host <n>              Connections at once per host (default 2): a download
                                      holds one, a --split one up to its split.
                                      Exit status: 0 when all completed, else the worst of the
                                      failures (5, 6, 4, 3, 1), listed on stderr.

        Requests:
          -H, --header 'Name: value'  Add a request header (repeatable). Never written to disk, and
                                      not sent to another origin a redirect leads to, unless
                                      --location-trusted.
          --location-trusted          Send the -H headers across redirects to other hosts too.

        TLS (curl's options and meaning; for every host, redirects included; Docs/TLS.md):
        \(TLSOptions.help)

        Accepted from curl and wget, for what courier does anyway (they change nothing):
          -O, --remote-name  -L, --location  -f, --fail  -C -, -c, --continue  -S, --show-error
          Short flags combine: -fsSL.

        Not available:
          --connect-timeout           FoundationNetworking on Linux sets no libcurl connect timeout
                                      and offers no way to set one. Connecting counts as silence:
                                      --timeout bounds it, and --max-time the whole download.

        Exit codes: 0 success, 1 other failure, 2 usage error, 3 network error (no route,
        connection, TLS, a TLS option that cannot be enforced, timeout, --max-time, invalid response), 4 HTTP error status, 5 integrity check failed
        (--sha256, length), 6 file error (output exists, cannot write), 130 interrupted by SIGINT
        (Ctrl-C), 143 stopped by SIGTERM (both keep the partial download for the next run, except
        with -o -, where the bytes already written stay on stdout).
        """
}
