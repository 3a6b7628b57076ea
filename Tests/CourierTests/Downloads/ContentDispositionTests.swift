import XCTest
@testable import Courier

final class ContentDispositionTests: XCTestCase {
    func testParsesTypeAndParametersInAnyCase() throws {
        let parsed = try XCTUnwrap(ContentDisposition("  Attachment ;  FileName = \"a b.txt\" ;SIZE=42 ; "))
        XCTAssertEqual(parsed.type, "attachment")
        XCTAssertEqual(parsed.parameters, ["filename": "a b.txt", "size": "42"])
        XCTAssertEqual(parsed.fileName, "a b.txt")

        let inline = try XCTUnwrap(ContentDisposition("inline"))
        XCTAssertEqual(inline, try XCTUnwrap(ContentDisposition("INLINE ;")))
        XCTAssertEqual(inline.parameters, [:])
        XCTAssertNil(inline.fileName)
    }

    func testReadsFileNamesFromWellFormedAndMalformedHeaders() {
        let rows: [(header: String, expected: String?)] = [
            ("attachment; filename=\"../../x\"", "../../x"),
            ("attachment; filename=plain.txt", "plain.txt"),
            ("attachment;filename=plain.txt;", "plain.txt"),
            // Unquoted values run to the next ";", as browsers read them.
            ("attachment; filename=my report.pdf ; size=3", "my report.pdf"),
            ("attachment; filename=\"semi;colon.txt\"; x=1", "semi;colon.txt"),
            ("attachment; filename=\"say \\\"hi\\\".txt\"", "say \"hi\".txt"),
            ("attachment; filename=\"back\\\\slash\"", "back\\slash"),
            ("attachment; filename=\"..\\..\\evil.exe\"", "....evil.exe"),
            ("attachment; filename=\"first.txt\"; filename=\"second.txt\"", "first.txt"),
            ("attachment; filename=\"a.txt\" junk \"x;y\"; size=3", "a.txt"),
            ("attachment;;;filename=x;;", "x"),
            ("attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
            ("attachment; FILENAME*=utf-8'de'%E2%82%AC.txt", "€.txt"),
            ("attachment; filename*=\"UTF-8''quoted%20anyway.txt\"", "quoted anyway.txt"),
            ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", "£ rates.txt"),
            ("attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
            // filename* wins over filename, in either order.
            ("attachment; filename=\"old.txt\"; filename*=UTF-8''new.txt", "new.txt"),
            ("attachment; filename*=UTF-8''new.txt; filename=\"old.txt\"", "new.txt"),
            // An ext-value that cannot be decoded is dropped, leaving filename.
            ("attachment; filename*=UTF-8''%C3; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=UTF-8''bad%zz; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=UTF-8''100%; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=UTF-8''raw é; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=KOI8-R''%C1; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=no-quotes.txt; filename=\"plain.txt\"", "plain.txt"),
            ("attachment; filename*=UTF-8'' ; filename=\"plain.txt\"", "plain.txt"),
            // Malformed, but still an answer rather than a trap.
            ("attachment; filename=\"unterminated", "unterminated"),
            ("attachment; filename=\"trailing\\", "trailing"),
            ("attachment; filename=", nil),
            ("attachment; filename=\"\"", nil),
            ("attachment; filename", nil),
            ("attachment; =x.txt", nil),
            ("attachment; filename*=", nil),
            ("attachment; filename*=''", nil),
            ("attachment; filename*='''", nil),
            ("attachment; \"filename=x.txt\"", nil),
            ("attachment; file\u{0}name=x.txt", nil),
        ]
        for row in rows {
            XCTAssertEqual(ContentDisposition(row.header)?.fileName, row.expected, row.header)
        }
    }

    func testUndecodableExtValueIsLeftOutOfTheParameters() throws {
        let parsed = try XCTUnwrap(ContentDisposition("attachment; filename*=UTF-8''%FF; title*=UTF-8''ok"))
        XCTAssertEqual(parsed.parameters, ["title*": "ok"])
        XCTAssertNil(parsed.fileName)
    }

    func testHeadersWithoutATypeAreRejected() {
        let headers = ["", "   ", ";;;", "; filename=x.txt", "\"attachment\"; filename=x.txt", "=x", "\u{0}attachment"]
        for header in headers { XCTAssertNil(ContentDisposition(header), header.debugDescription) }
    }
}
