import CourierSupport
import XCTest

/// The pieces the library, the test server and the command lines share (Sources/CourierSupport).
final class SharedSupportTests: XCTestCase {
    func testAJSONStringEscapesQuotesBackslashesAndEveryControlCharacter() {
        // Given text with every kind of character JSON must escape, and some it must not
        let text = "a\"b\\c\nd\re\tf\u{08}g\u{0C}h\u{01}i\u{1F}é😀/"
        // When it is written as a JSON string
        let quoted = JSONString.quoted(text)
        // Then it is exactly the escaped form, and JSONSerialization reads the same text back
        XCTAssertEqual(quoted, #""a\"b\\c\nd\re\tf\bg\fh\u0001i\u001fé😀/""#)
        let decoded = try? JSONSerialization.jsonObject(with: Data(quoted.utf8), options: [.fragmentsAllowed]) as? String
        XCTAssertEqual(decoded, text)
    }

    func testATokenIsOneOrMoreTcharsAndNothingElse() {
        XCTAssertTrue(HTTPToken.isToken("GET"))
        XCTAssertTrue(HTTPToken.isToken("!#$%&'*+-.^_`|~09azAZ"))
        for bad in ["", "GE T", "a:b", "a\"b", "é", "a(b)", "a,b", "a/b", "a;b", "a=b", "a\tb", "{x}"] {
            XCTAssertFalse(HTTPToken.isToken(bad), bad)
        }
        XCTAssertFalse(HTTPToken.isCharacter(Unicode.Scalar(0xE9)!))
        XCTAssertTrue(HTTPToken.isCharacter(Unicode.Scalar(UInt8(ascii: "~"))))
    }

    func testReasonPhrasesAreRFC9110sAndUnknownStatusesHaveNone() {
        XCTAssertEqual(HTTPReasonPhrase.phrase(for: 404), "Not Found")
        XCTAssertEqual(HTTPReasonPhrase.phrase(for: 413), "Content Too Large")
        XCTAssertNil(HTTPReasonPhrase.phrase(for: 299))
    }

    func testTheLockBoxHandsOutOneValueToManyThreads() {
        // Given a counter behind the lock
        let counter = Locked(0)
        // When 8 threads add 1,000 each
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        }
        // Then no increment was lost
        XCTAssertEqual(counter.current, 8_000)
        counter.set(1)
        XCTAssertEqual(counter.current, 1)
    }

    func testASCIICaseFoldsOnlyLetters() {
        XCTAssertTrue(ASCIICase.equals("HtTpS", "https"))
        XCTAssertTrue(ASCIICase.equals("Content-Length", "content-length"))
        XCTAssertFalse(ASCIICase.equals("http", "https"))
        // "@" (0x40) and "`" (0x60) differ only in the bit a careless fold would clear
        XCTAssertFalse(ASCIICase.equals("`", "@"))
        XCTAssertFalse(ASCIICase.equals("[", "{"))
        XCTAssertFalse(ASCIICase.equals("É", "é"))
        XCTAssertTrue(ASCIICase.equals("X-Ünïcode", "x-Ünïcode"))
        XCTAssertTrue(
            ASCIICase.equals(String(repeating: "Ab", count: 40), String(repeating: "aB", count: 40)), "longer than a small string")
    }

    func testASCIILowercasingFoldsOnlyCapitalLetters() {
        XCTAssertEqual(ASCIICase.lowercased("Cache-Control"), "cache-control")
        XCTAssertEqual(ASCIICase.lowercased("max-age"), "max-age")
        XCTAssertEqual(ASCIICase.lowercased("@[`{"), "@[`{")
        XCTAssertEqual(ASCIICase.lowercased("X-ÜNÏ"), "x-ÜnÏ", "only ASCII letters fold: no field name changes under a wider mapping")
        XCTAssertEqual(ASCIICase.lowercased("\u{212A}EEP"), "\u{212A}eep", "the Kelvin sign does not become a k")
        XCTAssertEqual(ASCIICase.lowercased(""), "")
    }
}
