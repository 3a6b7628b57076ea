import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Headers a caller marks secret never reach another origin and never reach the disk.
final class SensitiveHeaderTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.sensitiveHeaders = ["X-Manager-Secret"]
        return configuration
    }

    func testADownloadsSecretHeadersAreStrippedOnACrossOriginRedirect() throws {
        let target = server.url("/headers", host: "localhost").absoluteString
        var request = request("/redirect-to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
        request.setValue("policy-s3cret", forHTTPHeaderField: "X-Policy-Secret")
        request.setValue("manager-s3cret", forHTTPHeaderField: "X-Manager-Secret")
        request.setValue("visible", forHTTPHeaderField: "X-Plain")
        var policy = DownloadPolicy()
        policy.sensitiveHeaders = ["x-policy-secret"]
        let destination = directory.appendingPathComponent("echo.json")
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: request, to: .file(destination), policy: policy, completion: finish).resume()
        }
        XCTAssertNil(response?.error)
        let echoed = try String(contentsOf: destination, encoding: .utf8)
        XCTAssertFalse(echoed.contains("s3cret"), echoed)
        XCTAssertTrue(echoed.contains("visible"), "other headers still go: \(echoed)")
        XCTAssertEqual(server.requests.first?.header("X-Policy-Secret"), "policy-s3cret", "the first origin gets it")
    }

    func testSecretHeadersAreNeverWrittenIntoResumeDataOnlyTheirNames() throws {
        server.addFile("secret.bin", data: TestServer.deterministicBytes(count: 100_000, seed: 3), etag: "\"s\"")
        var request = request("/files/secret.bin?close_after=50000")
        request.setValue("manager-s3cret", forHTTPHeaderField: "X-Manager-Secret")
        request.setValue("Bearer t0ken", forHTTPHeaderField: "Authorization")
        request.setValue("visible", forHTTPHeaderField: "X-Plain")
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 0
        let destination = directory.appendingPathComponent("secret.bin")
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: request, to: .file(destination), policy: policy, completion: finish).resume()
        }
        let resume = try XCTUnwrap(response?.error?.resumeData)
        XCTAssertEqual(resume.headers["X-Plain"], "visible")
        XCTAssertNil(resume.headers["X-Manager-Secret"])
        XCTAssertEqual(resume.omittedHeaders, ["Authorization", "X-Manager-Secret"])
        let record = try Data(contentsOf: DownloadPolicy.recordFile(for: DownloadPolicy.defaultPartialFile(for: destination)))
        let text = String(decoding: record, as: UTF8.self)
        XCTAssertFalse(text.contains("s3cret") || text.contains("t0ken"), text)
    }
}
