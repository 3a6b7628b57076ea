import XCTest
@testable import Courier
import CourierTestServer

final class MultipartBoundaryTests: MultipartTestCase {
    func testGeneratedBoundaryIsCourierAnd32LowercaseHexDigits() throws {
        let form = MultipartFormData()
        let pattern = try NSRegularExpression(pattern: "^courier\\.[0-9a-f]{32}$")
        let range = NSRange(form.boundary.startIndex..., in: form.boundary)
        XCTAssertNotNil(pattern.firstMatch(in: form.boundary, range: range), form.boundary)
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=\(form.boundary)")
    }

    func testEveryFormGetsItsOwnBoundary() {
        let boundaries = Set((0..<100).map { _ in MultipartFormData().boundary })
        XCTAssertEqual(boundaries.count, 100)
    }

    func testDataContainingTheGeneratedBoundaryMakesTheFormPickAnother() throws {
        // Given data that contains the form's current delimiter
        var form = MultipartFormData()
        let first = form.boundary
        let tricky = Data("before\r\n--\(first)\r\nafter --\(first)--".utf8)

        // When it is appended
        form.append(tricky, name: "tricky")
        form.append(field: "ok", name: "plain")

        // Then the form has moved to a new boundary, says so in its content type, and parses
        XCTAssertNotEqual(form.boundary, first)
        XCTAssertTrue(form.boundary.hasPrefix("courier."))
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=\(form.boundary)")
        let parts = try MultipartParser.parse(try form.encoded(), boundary: form.boundary)
        XCTAssertEqual(parts.map(\.body), [tricky, Data("ok".utf8)])
    }

    func testFieldOrNameContainingTheGeneratedBoundaryMakesTheFormPickAnother() throws {
        var byValue = MultipartFormData()
        let valueBoundary = byValue.boundary
        byValue.append(field: "--\(valueBoundary)", name: "v")
        XCTAssertNotEqual(byValue.boundary, valueBoundary)

        var byName = MultipartFormData()
        let nameBoundary = byName.boundary
        byName.append(Data(), name: "--\(nameBoundary)")
        XCTAssertNotEqual(byName.boundary, nameBoundary)
        XCTAssertEqual(try MultipartParser.parse(try byName.encoded(), boundary: byName.boundary).count, 1)
    }

    func testGivenBoundaryFoundInDataIsAnInvalidRequest() {
        var form = MultipartFormData(boundary: "fixed")
        form.append(Data("x\r\n--fixed\r\ny".utf8), name: "n")
        let errors = encodingErrors(form)
        XCTAssertEqual(errors.map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest])
        XCTAssertEqual(form.boundary, "fixed", "a caller's boundary is never replaced")
    }

    func testGivenBoundaryFoundInAHeaderIsAnInvalidRequest() {
        var form = MultipartFormData(boundary: "fixed")
        form.append(Data(), name: "n", headers: ["X-Trace": "--fixed"])
        XCTAssertEqual(encodingErrors(form).map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest])
    }

    func testBoundaryInAFilePartIsFoundWhileCopying() throws {
        // Given a 3 MiB file with the delimiter near the end, past the first buffers
        var content = TestServer.deterministicBytes(count: 3 << 20, seed: 5)
        content.replaceSubrange(3_000_000..<3_000_007, with: Data("--fixed".utf8))
        var form = MultipartFormData(boundary: "fixed")
        form.append(fileAt: try file("f.bin", content), name: "file")

        // Then measuring succeeds (contents are not read), but encoding fails and leaves no file
        let framing =
            "--fixed\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n" + "\r\n--fixed--\r\n"
        XCTAssertEqual(try form.contentLength(), Int64(content.count + framing.utf8.count))
        let errors = encodingErrors(form, measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.invalidRequest, .invalidRequest])
        XCTAssertTrue(errors.first??.message.contains("f.bin") ?? false)
    }

    func testBoundaryInAStreamIsFoundWhenItArrivesOneByteAtATime() {
        let content = Data("abc--fixedxyz".utf8)
        var form = MultipartFormData(boundary: "fixed")
        form.append(
            stream: { ScriptedInputStream(content, chunk: 1) }, length: Int64(content.count), name: "s")
        XCTAssertEqual(error { () throws(CourierError) in try form.encoded() }?.code, .invalidRequest)
    }

    func testScannerFindsTheDelimiterSplitAtEveryPoint() {
        let delimiter = Array("--courier.0123".utf8)
        let data = Array("xx\r\n--courier.0123\r\nyy".utf8)
        for first in 0...data.count {
            for second in first...data.count {
                var scanner = MultipartFormData.BoundaryScanner(delimiter: delimiter)
                let found = [data[..<first], data[first..<second], data[second...]].contains { piece in
                    Array(piece).withUnsafeBytes { scanner.scan($0) }
                }
                XCTAssertTrue(found, "split at \(first), \(second)")
            }
        }
    }

    func testScannerIgnoresNearMissesSplitAtEveryPoint() {
        let delimiter = Array("--courier.0123".utf8)
        let data = Array("--courier.012--courier.0124-courier.0123--courier.01".utf8)
        for split in 0...data.count {
            var scanner = MultipartFormData.BoundaryScanner(delimiter: delimiter)
            let found = [data[..<split], data[split...]].contains { piece in
                Array(piece).withUnsafeBytes { scanner.scan($0) }
            }
            XCTAssertFalse(found, "split at \(split)")
        }
    }

    func testInvalidGivenBoundariesAreRejected() {
        for boundary in ["", String(repeating: "a", count: 71), "ends in space ", "semi;colon", "quote\"", "naïve"] {
            var form = MultipartFormData(boundary: boundary)
            form.append(field: "v", name: "n")
            XCTAssertEqual(
                encodingErrors(form).map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest], boundary)
        }
    }

    func testLongestAndPunctuatedBoundariesAreAccepted() throws {
        for boundary in [String(repeating: "z", count: 70), "a'()+_,-./:=? b"] {
            var form = MultipartFormData(boundary: boundary)
            form.append(field: "v", name: "n")
            XCTAssertEqual(try MultipartParser.parse(try form.encoded(), boundary: boundary).count, 1)
        }
    }

    func testBoundaryThatIsNotATokenIsQuotedInTheContentType() {
        XCTAssertEqual(MultipartFormData(boundary: "a=b c").contentType, "multipart/form-data; boundary=\"a=b c\"")
        XCTAssertEqual(MultipartFormData(boundary: "a-b.c_d").contentType, "multipart/form-data; boundary=a-b.c_d")
    }
}
