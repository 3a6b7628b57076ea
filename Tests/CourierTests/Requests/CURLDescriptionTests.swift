import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class CURLDescriptionTests: XCTestCase {
    private func request(
        _ url: String = "http://127.0.0.1/p", method: String = "GET", headers: [String: String] = [:], body: Data? = nil
    ) -> URLRequest {
        var request = RequestFixtures.request(url, method: method)
        request.allHTTPHeaderFields = headers
        request.httpBody = body
        return request
    }

    func testTypicalRequestLayout() {
        let description = request(
            "https://api.example.com/v1/items?x=1", method: "POST",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer abc", "accept": "application/json"],
            body: Data(#"{"a":1}"#.utf8)
        ).cURLDescription()
        XCTAssertEqual(
            description,
            """
            curl --globoff \\
              -X 'POST' \\
              -H 'accept: application/json' \\
              -H 'Authorization: ***' \\
              -H 'Content-Type: application/json' \\
              --data-binary '{"a":1}' \\
              'https://api.example.com/v1/items?x=1'
            """)
    }

    func testSensitiveHeadersAreRedacted() {
        let table: [(header: String, sensitive: Set<String>)] = [
            ("Authorization", []), ("authorization", []), ("Proxy-Authorization", []), ("COOKIE", []),
            ("X-Api-Key", ["x-api-key"]), ("x-token", ["X-Token"]),
        ]
        for row in table {
            let secret = "s3cr3t-\(row.header)"
            let description = request(headers: [row.header: secret, "X-Visible": "shown"])
                .cURLDescription(sensitiveHeaders: row.sensitive)
            XCTAssertFalse(description.contains(secret), description)
            XCTAssertTrue(description.contains("-H '\(row.header): ***'"), description)
            XCTAssertTrue(description.contains("-H 'X-Visible: shown'"), description)
        }
        XCTAssertTrue(request(headers: ["X-Api-Key": "k"]).cURLDescription().contains("X-Api-Key: ***"), "a default name")
        XCTAssertTrue(request(headers: ["X-Custom-Key": "k"]).cURLDescription().contains("X-Custom-Key: k"), "only when asked")
    }

    func testURLUserInfoIsRedacted() {
        // Since `Redaction`, the whole user info is masked, the user name too (it used to show:
        // `https://user:***@h/p?q=1`, `https://user@h/`).
        let table: [(url: String, shown: String)] = [
            ("https://user:hunter2@h/p?q=1", "https://***@h/p?q=1"),
            ("https://user:p%40ss@h:8443/", "https://***@h:8443/"),
            ("https://user@h/", "https://***@h/"),
            ("http://h/p", "http://h/p"),
        ]
        for row in table {
            let description = request(row.url).cURLDescription()
            XCTAssertTrue(description.hasSuffix("'\(row.shown)'"), description)
            XCTAssertFalse(description.contains("hunter2") || description.contains("p%40ss"), description)
        }
    }

    func testSecretQueryParametersAreRedactedAndNoneShowsEverything() {
        let secret = request("https://me:hunter2@h/p?page=2&access_token=s3cret&X-Amz-Signature=abc%2F1#top")
        let masked = secret.cURLDescription()
        XCTAssertTrue(masked.hasSuffix("'https://***@h/p?page=2&access_token=***&X-Amz-Signature=***#top'"), masked)
        XCTAssertTrue(
            secret.cURLDescription(sensitiveHeaders: ["X-Other"]).hasSuffix(
                "'https://***@h/p?page=2&access_token=***&X-Amz-Signature=***#top'"))
        let shown = secret.cURLDescription(redaction: .none)
        XCTAssertTrue(shown.hasSuffix("'https://me:hunter2@h/p?page=2&access_token=s3cret&X-Amz-Signature=abc%2F1#top'"), shown)

        let headers = request(headers: ["Authorization": "Bearer s3cret", "Set-Cookie": "id=s3cret"])
        XCTAssertFalse(headers.cURLDescription().contains("s3cret"))
        XCTAssertTrue(headers.cURLDescription().contains("-H 'Set-Cookie: ***'"))
        XCTAssertTrue(headers.cURLDescription(redaction: .none).contains("-H 'Authorization: Bearer s3cret'"))
        let custom = Redaction(headers: ["X-Api-Key"], queryParameters: ["page"], mask: "<hidden>")
        let described = request("http://h/?page=2&token=t", headers: ["X-Api-Key": "k", "Authorization": "a"])
            .cURLDescription(redaction: custom)
        XCTAssertTrue(described.contains("-H 'X-Api-Key: <hidden>'") && described.contains("-H 'Authorization: a'"), described)
        XCTAssertTrue(described.hasSuffix("'http://h/?page=<hidden>&token=t'"), described)
    }

    func testHeadersAreInAStableOrder() {
        let names = ["b", "A", "c", "X-Zed", "x-alpha", "Accept"]
        var descriptions: Set<String> = []
        for rotation in 0..<names.count {
            var headers: [String: String] = [:]
            for name in names[rotation...] + names[..<rotation] { headers[name] = "v" }
            descriptions.insert(request(headers: headers).cURLDescription())
        }
        XCTAssertEqual(descriptions.count, 1)
        let order = descriptions.first!.split(separator: "\n").filter { $0.contains("-H") }.map { $0.split(separator: "'")[1] }
        XCTAssertEqual(order, ["A: v", "Accept: v", "b: v", "c: v", "x-alpha: v", "X-Zed: v"])
    }

    func testMethodAndBodyArguments() {
        let table: [(request: URLRequest, contains: [String], lacks: [String])] = [
            (request(), ["-X 'GET'"], ["--data-binary", "--head"]),
            (request(method: "HEAD"), ["--head"], ["-X", "--data-binary"]),
            (request(method: "DELETE"), ["-X 'DELETE'"], ["--data-binary"]),
            (request(method: "PUT", body: Data("a=1&b=2".utf8)), ["-X 'PUT'", "--data-binary 'a=1&b=2'"], ["printf"]),
            (request(method: "POST", body: Data()), ["--data-binary ''"], ["printf"]),
            (request(headers: ["X-Empty": ""]), ["-H 'X-Empty;'"], ["X-Empty:"]),
        ]
        for row in table {
            let description = row.request.cURLDescription()
            for text in row.contains { XCTAssertTrue(description.contains(text), "\(text) missing from \(description)") }
            for text in row.lacks { XCTAssertFalse(description.contains(text), "\(text) in \(description)") }
        }
    }

    // MARK: Pasting into a shell

    func testAShellReceivesExactlyTheArgumentsAndBody() throws {
        let tricky =
            #"it's "quoted" $HOME `id` $(touch pwned) \back \\ !1 *.swift ~ ; | & < > # "#
            + "\nsecond line\ttab 'again'"
        let table: [(name: String, request: URLRequest, arguments: [String], stdin: Data)] = [
            (
                "quotes and metacharacters",
                request("http://bench.invalid/p?a='1'&b=$x", method: "POST", headers: ["X-Note": tricky], body: Data(tricky.utf8)),
                ["--globoff", "-X", "POST", "-H", "X-Note: \(tricky)", "--data-binary", tricky, "http://bench.invalid/p?a='1'&b=$x"],
                Data()
            ),
            (
                "binary body through printf",
                request(method: "POST", body: Data([0, 1, 0x7F, 0xFF, 0xC3, 0x28, 0x27, 0x25, 0x5C, 0x61, 0x0A, 0x30])),
                ["--globoff", "-X", "POST", "--data-binary", "@-", "http://127.0.0.1/p"],
                Data([0, 1, 0x7F, 0xFF, 0xC3, 0x28, 0x27, 0x25, 0x5C, 0x61, 0x0A, 0x30])
            ),
            (
                "body that curl would read as a file name",
                request(method: "POST", body: Data("@/etc/passwd".utf8)),
                ["--globoff", "-X", "POST", "--data-binary", "@-", "http://127.0.0.1/p"],
                Data("@/etc/passwd".utf8)
            ),
        ]
        for row in table {
            let (arguments, stdin) = try runInShell(row.request.cURLDescription())
            XCTAssertEqual(arguments, row.arguments, row.name)
            XCTAssertEqual(stdin, row.stdin, row.name)
        }
    }

    /// Runs `command` with `/bin/sh`, `curl` replaced by a function that records its arguments
    /// and what it reads from standard input.
    private func runInShell(_ command: String) throws -> (arguments: [String], stdin: Data) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let argumentsFile = directory.appendingPathComponent("arguments")
        let stdinFile = directory.appendingPathComponent("stdin")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            #"curl() { for a in "$@"; do printf '%s\0' "$a"; done > "$ARGUMENTS_FILE"; cat > "$STDIN_FILE"; }"# + "\n" + command,
        ]
        process.environment = ["ARGUMENTS_FILE": argumentsFile.path, "STDIN_FILE": stdinFile.path, "HOME": "/home/x", "x": "X"]
        process.standardInput = FileHandle.nullDevice
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, command)
        let recorded = try Data(contentsOf: argumentsFile)
        let arguments = recorded.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["arguments", "stdin"])
        return (arguments, try Data(contentsOf: stdinFile))
    }
}
