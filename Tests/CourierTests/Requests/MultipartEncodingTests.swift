import XCTest
@testable import Courier
import CourierTestServer

final class MultipartEncodingTests: MultipartTestCase {
    private func bytes(_ text: String) -> Data { Data(text.utf8) }

    /// Encodes `form` in memory and into a file, checks both give the same bytes and that
    /// `contentLength()` agrees, and returns the bytes.
    private func encodeBothWays(_ form: MultipartFormData, file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        let body = try form.encoded()
        let target = directory.appendingPathComponent("body-\(UUID().uuidString).multipart")
        try form.write(to: target)
        XCTAssertEqual(try Data(contentsOf: target), body, "write(to:) and encoded() differ", file: file, line: line)
        XCTAssertEqual(try form.contentLength(), Int64(body.count), file: file, line: line)
        return body
    }

    func testFieldDataFileAndStreamPartsEncodeToTheExactBytes() throws {
        // Given one part of each kind, with custom headers in unsorted order
        let note = try file("note.txt", bytes("file content\n"))
        var form = MultipartFormData(boundary: "XyZ-boundary")
        form.append(field: "Hello", name: "title")
        form.append(
            Data([0x00, 0xFF, 0x0D, 0x0A]), name: "blob", fileName: "b.bin", mimeType: "application/x-test",
            headers: ["X-B": "2", "x-a": "1"])
        form.append(fileAt: note, name: "doc", headers: ["Content-Language": "en"])
        let json = bytes(#"{"s":1}"#)
        form.append(
            stream: { InputStream(data: json) }, length: 7, name: "meta", fileName: "m.json", headers: ["X-Checksum": "abc"])

        // When it is encoded
        let body = try encodeBothWays(form)

        // Then every byte is where RFC 7578 puts it
        var expected = bytes("--XyZ-boundary\r\n")
        expected += bytes("Content-Disposition: form-data; name=\"title\"\r\n\r\n")
        expected += bytes("Hello\r\n")
        expected += bytes("--XyZ-boundary\r\n")
        expected += bytes("Content-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n")
        expected += bytes("Content-Type: application/x-test\r\n")
        expected += bytes("x-a: 1\r\nX-B: 2\r\n\r\n")
        expected += Data([0x00, 0xFF, 0x0D, 0x0A]) + bytes("\r\n")
        expected += bytes("--XyZ-boundary\r\n")
        expected += bytes("Content-Disposition: form-data; name=\"doc\"; filename=\"note.txt\"\r\n")
        expected += bytes("Content-Type: text/plain\r\n")
        expected += bytes("Content-Language: en\r\n\r\n")
        expected += bytes("file content\n\r\n")
        expected += bytes("--XyZ-boundary\r\n")
        expected += bytes("Content-Disposition: form-data; name=\"meta\"; filename=\"m.json\"\r\n")
        expected += bytes("Content-Type: application/json\r\n")
        expected += bytes("X-Checksum: abc\r\n\r\n")
        expected += bytes(#"{"s":1}"#) + bytes("\r\n")
        expected += bytes("--XyZ-boundary--\r\n")
        XCTAssertEqual(String(decoding: body, as: UTF8.self), String(decoding: expected, as: UTF8.self))
        XCTAssertEqual(body, expected)
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=XyZ-boundary")
    }

    func testEmptyFormIsOnlyTheClosingDelimiter() throws {
        let form = MultipartFormData(boundary: "empty")
        XCTAssertEqual(try encodeBothWays(form), bytes("--empty--\r\n"))
    }

    func testDataPartGetsAContentTypeOnlyWhenGivenAMimeType() throws {
        var form = MultipartFormData(boundary: "b")
        form.append(bytes("x"), name: "plain", fileName: "x.png")
        form.append(bytes("y"), name: "typed", mimeType: "image/png")
        let parts = try MultipartParser.parse(try encodeBothWays(form), boundary: "b")
        XCTAssertEqual(parts.map { $0.header("Content-Type") }, [nil, "image/png"])
        XCTAssertEqual(parts.map { $0.dispositionParameter("filename") }, ["x.png", nil])
    }

    func testFilePartNameAndTypeDefaultFromTheFileOrTheGivenName() throws {
        let photo = try file("Photo.JPG", bytes("jpeg"))
        var form = MultipartFormData(boundary: "b")
        form.append(fileAt: photo, name: "a")
        form.append(fileAt: photo, name: "b", fileName: "scan.pdf")
        form.append(fileAt: photo, name: "c", fileName: "scan.pdf", mimeType: "image/x-custom")
        let parts = try MultipartParser.parse(try encodeBothWays(form), boundary: "b")
        XCTAssertEqual(parts.map { $0.dispositionParameter("filename") }, ["Photo.JPG", "scan.pdf", "scan.pdf"])
        XCTAssertEqual(parts.map { $0.header("Content-Type") }, ["image/jpeg", "application/pdf", "image/x-custom"])
        XCTAssertEqual(parts.map(\.body), Array(repeating: bytes("jpeg"), count: 3))
    }

    func testStreamPartTypeComesFromItsFileNameOrIsOctetStream() throws {
        var form = MultipartFormData(boundary: "b")
        form.append(stream: { InputStream(data: Data("1".utf8)) }, length: 1, name: "a")
        form.append(stream: { InputStream(data: Data("2".utf8)) }, length: 1, name: "b", fileName: "c.csv")
        let parts = try MultipartParser.parse(try encodeBothWays(form), boundary: "b")
        XCTAssertEqual(parts.map { $0.header("Content-Type") }, ["application/octet-stream", "text/csv"])
        XCTAssertEqual(parts.map { $0.dispositionParameter("filename") }, [nil, "c.csv"])
    }

    func testRandomBinaryPartsRoundTripThroughAParser() throws {
        // Given parts of every kind holding random bytes, some larger than the encoder's buffers,
        // and data that nearly contains the boundary
        let seed = UInt64.random(in: 1...UInt64.max)
        let sizes = TestServer.deterministicBytes(count: 16, seed: seed).map { Int($0) * 997 }
        var form = MultipartFormData()
        let nearMiss = bytes("\r\n--" + form.boundary.dropLast() + "\r\n--\r\n")
        var expected: [(name: String, fileName: String?, type: String?, body: Data)] = []
        for (index, size) in sizes.enumerated() {
            let content = TestServer.deterministicBytes(count: size, seed: seed &+ UInt64(index)) + nearMiss
            let name = "part \(index) é"
            switch index % 4 {
            case 0:
                form.append(content, name: name)
                expected.append((name, nil, nil, content))
            case 1:
                form.append(content, name: name, fileName: "d\(index).bin", mimeType: "application/x-\(index)")
                expected.append((name, "d\(index).bin", "application/x-\(index)", content))
            case 2:
                form.append(fileAt: try file("f\(index).png", content), name: name)
                expected.append((name, "f\(index).png", "image/png", content))
            default:
                form.append(stream: { InputStream(data: content) }, length: Int64(content.count), name: name)
                expected.append((name, nil, "application/octet-stream", content))
            }
        }
        // Three file parts of 1.5 MiB each also cross the 1 MiB buffer of write(to:)
        let big = TestServer.deterministicBytes(count: 3 << 19, seed: seed)
        form.append(fileAt: try file("big.bin", big), name: "big")
        expected.append(("big", "big.bin", "application/octet-stream", big))

        // When it is encoded and parsed back
        let parts = try MultipartParser.parse(try encodeBothWays(form), boundary: form.boundary)

        // Then every part comes back with its headers and exact bytes
        XCTAssertEqual(parts.count, expected.count, "seed \(seed)")
        for (part, want) in zip(parts, expected) {
            XCTAssertEqual(part.dispositionParameter("name"), want.name, "seed \(seed)")
            XCTAssertEqual(part.dispositionParameter("filename"), want.fileName, "seed \(seed)")
            XCTAssertEqual(part.header("Content-Type"), want.type, "seed \(seed)")
            XCTAssertEqual(part.headers.count, want.type == nil ? 1 : 2, "seed \(seed)")
            XCTAssertTrue(part.body == want.body, "part \(want.name) differs; seed \(seed)")
        }
    }

    func testQuotesAndLineBreaksInNamesAndFileNamesArePercentEncoded() throws {
        var form = MultipartFormData(boundary: "b")
        form.append(bytes("v"), name: "a\"b\rc\nd\r\ne", fileName: "\"quoted\"\r\n.txt")
        let body = try encodeBothWays(form)
        let disposition = try MultipartParser.parse(body, boundary: "b").first?.header("Content-Disposition")
        XCTAssertEqual(disposition, #"form-data; name="a%22b%0Dc%0Ad%0D%0Ae"; filename="%22quoted%22%0D%0A.txt""#)
    }

    func testNonASCIINamesAndFileNamesStayRawUTF8() throws {
        var form = MultipartFormData(boundary: "b")
        form.append(bytes("v"), name: "grüße 名前", fileName: "résumé 📄.pdf")
        let body = try encodeBothWays(form)
        let head = bytes("Content-Disposition: form-data; name=\"grüße 名前\"; filename=\"résumé 📄.pdf\"\r\n")
        XCTAssertNotNil(body.range(of: head))
        XCTAssertNil(body.range(of: bytes("filename*")), "RFC 7578 §4.2: no filename*")
        XCTAssertNil(body.range(of: bytes("%C3")), "no percent-encoding of UTF-8")
    }

    func testLineBreaksInACustomHeaderValueAreAnInvalidRequest() {
        for value in ["a\r\nInjected: yes", "a\rb", "a\nb"] {
            var form = MultipartFormData(boundary: "b")
            form.append(bytes("v"), name: "n", headers: ["X-Note": value])
            let errors = encodingErrors(form)
            XCTAssertEqual(errors.map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest], value.debugDescription)
            XCTAssertTrue(errors[0]?.message.contains("X-Note") ?? false, errors[0]?.message ?? "")
        }
    }

    func testLineBreakInAMimeTypeIsAnInvalidRequest() {
        var form = MultipartFormData(boundary: "b")
        form.append(bytes("v"), name: "n", mimeType: "text/plain\r\nX-Injected: 1")
        XCTAssertEqual(encodingErrors(form).map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest])
    }

    func testCustomHeaderNamesMustBeTokensOtherThanTheTwoStandardOnes() {
        for field in ["", "X Note", "X:Note", "X-Nöte", "Content-Type", "content-disposition"] {
            var form = MultipartFormData(boundary: "b")
            form.append(bytes("v"), name: "n", headers: [field: "v"])
            XCTAssertEqual(encodingErrors(form).map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest], field)
        }
    }

    func testContentLengthEqualsTheEncodedAndWrittenSizes() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var form = MultipartFormData()
        form.append(field: "ünïcode field", name: "f")
        form.append(TestServer.deterministicBytes(count: 100_000, seed: seed), name: "d", fileName: "d", mimeType: "x/y")
        form.append(fileAt: try file("f.bin", TestServer.deterministicBytes(count: 2_500_000, seed: seed)), name: "file")
        form.append(stream: { InputStream(data: Data(count: 70_000)) }, length: 70_000, name: "s", headers: ["X-A": "b"])

        let length = try form.contentLength()
        let target = directory.appendingPathComponent("out.multipart")
        try form.write(to: target)
        let written = try FileManager.default.attributesOfItem(atPath: target.path)[.size] as? NSNumber

        XCTAssertEqual(length, Int64(try form.encoded().count))
        XCTAssertEqual(written?.int64Value, length)
    }
}
