import XCTest
@testable import Courier

final class MultipartMIMETypeTests: XCTestCase {
    func testCommonExtensionsHaveTheirTypes() {
        let table = [
            "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
            "js": "text/javascript", "json": "application/json", "xml": "application/xml", "csv": "text/csv",
            "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "svg": "image/svg+xml", "mp3": "audio/mpeg", "mp4": "video/mp4", "wav": "audio/wav",
        ]
        for (ext, type) in table {
            XCTAssertEqual(MIMEType.forPathExtension(ext), type, ext)
        }
    }

    func testExtensionsAreCaseInsensitiveAndMayHaveALeadingDot() {
        XCTAssertEqual(MIMEType.forPathExtension("PNG"), "image/png")
        XCTAssertEqual(MIMEType.forPathExtension("JpEg"), "image/jpeg")
        XCTAssertEqual(MIMEType.forPathExtension(".pdf"), "application/pdf")
    }

    func testUnknownOrEmptyExtensionIsOctetStream() {
        for ext in ["", "unknownext", "tar.gz", ".", "png "] {
            XCTAssertEqual(MIMEType.forPathExtension(ext), "application/octet-stream", ext)
        }
    }

    func testFileNameTypeComesFromItsLastExtension() {
        XCTAssertEqual(MIMEType.forFileName("backup.tar.gz"), "application/gzip")
        XCTAssertEqual(MIMEType.forFileName("dir.d/report.PDF"), "application/pdf")
        XCTAssertEqual(MIMEType.forFileName("dir.png/README"), "application/octet-stream")
        XCTAssertEqual(MIMEType.forFileName(".profile"), "application/octet-stream", "a leading dot starts no extension")
        XCTAssertEqual(MIMEType.forFileName("trailing."), "application/octet-stream")
        XCTAssertEqual(MIMEType.forFileName(""), "application/octet-stream")
    }
}
