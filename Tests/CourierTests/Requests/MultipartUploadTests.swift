import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class MultipartUploadTests: CourierTestCase {
    func testWrittenBodyUploadsWithItsContentType() throws {
        // Given a form written to a file
        var form = MultipartFormData()
        form.append(field: "Ada", name: "author")
        form.append(
            TestServer.deterministicBytes(count: 200_000, seed: 21), name: "blob", fileName: "blob.bin",
            mimeType: "application/octet-stream")
        let body = directory.appendingPathComponent("upload.multipart")
        try form.write(to: body)

        // When it is uploaded with the form's content type
        var request = request("/anything", method: "POST")
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        let response = wait { finish in manager.uploadTask(with: request, from: .file(body), completion: finish).resume() }

        // Then the server received exactly those bytes, labelled with that boundary
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.last?.header("Content-Type"), form.contentType)
        XCTAssertEqual(server.requests.last?.header("Content-Length"), String(try form.contentLength()))
        XCTAssertEqual(server.requests.last?.body, try form.encoded())
    }
}
