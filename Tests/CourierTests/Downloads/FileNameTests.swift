import CourierTestSupport
import XCTest
@testable import Courier

final class FileNameTests: XCTestCase {
    func testSafeNameKeepsOnlyTheLastCleanComponent() {
        let rows: [(raw: String, expected: String)] = [
            ("report.pdf", "report.pdf"),
            ("../../x", "x"),
            ("..\\..\\evil.exe", "evil.exe"),
            ("/etc/passwd", "passwd"),
            ("C:\\Windows\\win.ini", "win.ini"),
            ("reports/", "reports"),
            (".bashrc", "bashrc"),
            ("...hidden", "hidden"),
            (" . .profile", "profile"),
            ("name. . .", "name"),
            ("  spaced out  ", "spaced out"),
            ("a\u{0}b\u{1}c\u{1F}d\u{7F}e\u{85}f\u{9F}.txt", "abcdef.txt"),
            ("line\nbreak\r\ttab.txt", "linebreaktab.txt"),
            ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
            ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", "passwd"),
            ("%2E%2E%5Cboot.ini", "boot.ini"),
            ("%00%0Aname.txt", "name.txt"),
            ("na%C3%AFve%20file.txt", "naïve file.txt"),
            // Decoded once only: a doubly encoded slash stays text.
            ("%252e%252e%252fx", "%2e%2e%2fx"),
            ("100%", "100%"),
            ("50%zz off.txt", "50%zz off.txt"),
            ("bad%C3utf8", "bad\u{FFFD}utf8"),
            ("ok /\u{301}x", "\u{301}x"),
            ("ünïcödé.txt", "ünïcödé.txt"),
        ]
        for row in rows {
            XCTAssertEqual(FileNameSanitizer.safeName(row.raw), row.expected, row.raw.debugDescription)
        }
    }

    func testUnusableNamesGiveTheFallback() {
        let unusable = ["", ".", "..", "...", "///", "\\\\", "./..", " . ", "a/..", "%2e%2e", "\u{0}\u{1}", "\u{202E}"]
        for raw in unusable {
            XCTAssertEqual(FileNameSanitizer.safeName(raw), "download", raw.debugDescription)
            XCTAssertEqual(FileNameSanitizer.safeName(raw, fallback: "index.html"), "index.html", raw.debugDescription)
        }
        // The fallback gets the same treatment, and an unusable one gives way to "download".
        XCTAssertEqual(FileNameSanitizer.safeName("..", fallback: "../x"), "x")
        XCTAssertEqual(FileNameSanitizer.safeName("..", fallback: ".."), "download")
        XCTAssertEqual(FileNameSanitizer.safeName("", maxBytes: 3), "dow")
    }

    func testLongNameIsCutToTheLimitAndKeepsItsExtension() {
        let long = FileNameSanitizer.safeName(String(repeating: "a", count: 996) + ".bin")
        XCTAssertEqual(long, String(repeating: "a", count: 196) + ".bin")

        let archive = FileNameSanitizer.safeName(String(repeating: "b", count: 993) + ".tar.gz")
        XCTAssertEqual(archive, String(repeating: "b", count: 193) + ".tar.gz")

        let plain = FileNameSanitizer.safeName(String(repeating: "c", count: 1000))
        XCTAssertEqual(plain, String(repeating: "c", count: 200))

        // Not short extensions: cut like any other text.
        let longExtension = FileNameSanitizer.safeName("x." + String(repeating: "d", count: 998))
        XCTAssertEqual(longExtension, "x." + String(repeating: "d", count: 198))
    }

    func testExtensionIsKeptOnlyWhenSomeOfTheStemFits() {
        let rows: [(raw: String, maxBytes: Int, expected: String)] = [
            ("abcdefgh.tar.gz", 8, "a.tar.gz"),
            ("abcdefgh.tar.gz", 7, "abcdefg"),
            ("abcdefgh.tar.gz", 5, "abcde"),
            ("abcdefgh.bin", 6, "ab.bin"),
            ("tar.gz", 5, "ta.gz"),
            // A stem cut to end in dots or spaces is trimmed before the extension goes back on.
            ("ab. . .cdefgh.bin", 9, "ab.bin"),
            ("abc def.bin", 8, "abc.bin"),
        ]
        for row in rows {
            let name = FileNameSanitizer.safeName(row.raw, maxBytes: row.maxBytes)
            XCTAssertEqual(name, row.expected, "\(row.raw) in \(row.maxBytes)")
        }
    }

    func testMultiByteCharactersAreNeverSplit() {
        let rows: [(raw: String, maxBytes: Int, expected: String)] = [
            (String(repeating: "é", count: 150), 200, String(repeating: "é", count: 100)),
            (String(repeating: "€", count: 100), 200, String(repeating: "€", count: 66)),
            (String(repeating: "😀", count: 60) + ".bin", 50, String(repeating: "😀", count: 11) + ".bin"),
            // A combining sequence is one character and is kept whole …
            (String(repeating: "e\u{301}", count: 10), 10, String(repeating: "e\u{301}", count: 3)),
            ("👩‍👩‍👧👩‍👩‍👧", 20, "👩‍👩‍👧"),
            // … unless the first character alone is too long; then whole scalars.
            ("a" + String(repeating: "\u{301}", count: 300), 10, "a" + String(repeating: "\u{301}", count: 4)),
            ("€", 2, "do"),
        ]
        for row in rows {
            let name = FileNameSanitizer.safeName(row.raw, maxBytes: row.maxBytes)
            XCTAssertEqual(name, row.expected, "\(row.raw.prefix(8)) in \(row.maxBytes)")
            XCTAssertLessThanOrEqual(name.utf8.count, row.maxBytes)
        }
    }

    func testSuggestedNamePrefersContentDispositionThenTheURL() throws {
        let rows: [(url: String, header: String?, expected: String)] = [
            ("http://h/a/b/report.pdf?x=1", nil, "report.pdf"),
            ("http://h/a/b/report.pdf#top", nil, "report.pdf"),
            ("http://h/", nil, "download"),
            ("http://h", nil, "download"),
            ("http://h/dir/", nil, "dir"),
            ("http://h/a/na%C3%AFve%20file.txt", nil, "naïve file.txt"),
            ("http://h/a/..%2F..%2Fetc%2Fpasswd", nil, "passwd"),
            ("http://h/a/%252e%252e", nil, "%2e%2e"),
            ("http://h/x.bin", "attachment; filename=\"../../x\"", "x"),
            ("http://h/x.bin", "attachment; filename=\"..\\\\..\\\\evil.exe\"", "evil.exe"),
            ("http://h/x.bin", "attachment; filename=\"..\\..\\evil.exe\"", "evil.exe"),
            ("http://h/x.bin", "attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
            ("http://h/x.bin", "attachment; filename=\"plain.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
            ("http://h/x.bin", "attachment; filename=\".bashrc\"", "bashrc"),
            ("http://h/x.bin", "attachment; filename=\"%2e%2e%2f%2e%2e%2fetc%2fpasswd\"", "passwd"),
            // No usable name in the header: the URL decides.
            ("http://h/x.bin", "attachment; filename=\"..\"", "x.bin"),
            ("http://h/x.bin", "attachment; filename=", "x.bin"),
            ("http://h/x.bin", "attachment", "x.bin"),
            ("http://h/x.bin", ";;;", "x.bin"),
            ("http://h/x.bin", "", "x.bin"),
            ("http://h/", "attachment; filename=\"unterminated", "unterminated"),
            ("http://h/", "attachment; filename=\"\u{0}\"", "download"),
        ]
        for row in rows {
            let url = try XCTUnwrap(URL(string: row.url), row.url)
            XCTAssertEqual(
                FileNameSanitizer.suggestedName(for: url, contentDisposition: row.header), row.expected,
                "\(row.url) \(row.header ?? "nil")")
        }
        let root = try XCTUnwrap(URL(string: "http://h/"))
        let named = FileNameSanitizer.suggestedName(for: root, contentDisposition: nil, fallback: "index.html")
        XCTAssertEqual(named, "index.html")
    }

    func testTheURLsOwnNameIsTheSuggestedOneWithoutAHeaderAndNoneWhenItsPathGivesNone() throws {
        let named = try XCTUnwrap(URL(string: "https://example.com/files/report%20v2.pdf?x=1"))
        XCTAssertEqual(FileNameSanitizer.urlName(for: named), "report v2.pdf")
        XCTAssertEqual(FileNameSanitizer.urlName(for: named), FileNameSanitizer.suggestedName(for: named, contentDisposition: nil))
        for text in ["https://example.com/", "https://example.com", "https://example.com/..", "https://example.com/%2e%2e/"] {
            XCTAssertNil(FileNameSanitizer.urlName(for: try XCTUnwrap(URL(string: text))), text)
        }
    }

    func testRandomInputAlwaysGivesAValidName() throws {
        var generator = SplitMix64(seed: 0x00C0_FFEE)
        // Pieces that matter to the parsers, mixed with arbitrary bytes.
        let pieces = [
            "a", "Z", "7", ".", "..", "/", "\\", "%", "%2e", "%2F", "%5c", "%00", "%C3%A9", "%FF", "\"", "\\\"",
            ";", "=", "*", "'", " ", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{202E}", "é", "€", "😀",
            "e\u{301}", "\u{301}", "filename", "filename*", "UTF-8''", "iso-8859-1'en'", "attachment", ".bin",
            ".tar.gz",
        ].map { Array($0.utf8) }
        let base = try XCTUnwrap(URL(string: "http://example.invalid/files/"))
        var distinct = Set<String>()

        for _ in 0..<3000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                if Bool.random(using: &generator) {
                    bytes += pieces[Int.random(in: 0..<pieces.count, using: &generator)]
                } else {
                    bytes.append(UInt8.random(in: 0...255, using: &generator))
                }
            }
            let input = String(decoding: bytes, as: UTF8.self)
            let maxBytes = Int.random(in: 1...48, using: &generator)

            let name = FileNameSanitizer.safeName(input, maxBytes: maxBytes)
            assertValidName(name, maxBytes: maxBytes, input: input)
            distinct.insert(name)

            for header in [input, "attachment; filename=" + input, "attachment; filename*=" + input] {
                let parsed = ContentDisposition(header)
                if let fileName = parsed?.fileName {
                    assertValidName(FileNameSanitizer.safeName(fileName), maxBytes: 200, input: header)
                }
                var components = URLComponents()
                components.path = input
                let url = components.url(relativeTo: base) ?? base
                assertValidName(
                    FileNameSanitizer.suggestedName(for: url, contentDisposition: header), maxBytes: 200, input: header)
            }
            XCTAssertNotNil(ContentDisposition("attachment; filename=\"" + input))
        }
        // The inputs must be varied enough to mean something, not mostly fall back.
        XCTAssertGreaterThan(distinct.count, 2000)
    }

    private func assertValidName(_ name: String, maxBytes: Int, input: String, line: UInt = #line) {
        let forbidden = name.unicodeScalars.contains {
            $0 == "/" || $0 == "\\" || $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
        }
        let valid = !name.isEmpty && name.utf8.count <= maxBytes && !forbidden && name.unicodeScalars.first != "."
        XCTAssertTrue(valid, "\(input.debugDescription) gave \(name.debugDescription)", line: line)
    }
}
