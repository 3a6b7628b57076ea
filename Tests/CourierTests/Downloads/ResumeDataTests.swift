import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ResumeDataTests: XCTestCase {
    private let sample = ResumeData(
        url: URL(string: "http://127.0.0.1:8/files/a.bin")!, headers: ["X-Trace": "1"],
        partialFile: URL(fileURLWithPath: "/tmp/.a.bin.courier-partial"), bytesOnDisk: 1234, validator: "\"v1\"",
        totalLength: 5000)

    private func decodeError(_ data: Data) -> CourierError? {
        do {
            _ = try ResumeData(data: data)
            return nil
        } catch { return error }
    }

    func testRoundTrip() throws {
        XCTAssertEqual(try ResumeData(data: sample.encoded()), sample)
        XCTAssertTrue(String(decoding: sample.encoded(), as: UTF8.self).hasPrefix("courier-resume 1\nsha256 "))
    }

    func testEveryTruncationIsRejected() {
        let encoded = sample.encoded()
        for length in stride(from: 0, to: encoded.count, by: 7) {
            XCTAssertEqual(decodeError(encoded.prefix(length))?.code, .invalidResumeData, "length \(length)")
        }
    }

    func testAnyAlteredPayloadByteIsRejected() {
        let encoded = sample.encoded()
        let payloadStart = encoded.lastIndex(of: UInt8(ascii: "\n"))! + 1
        for index in stride(from: payloadStart, to: encoded.count, by: 5) {
            var tampered = encoded
            tampered[index] ^= 0x01
            XCTAssertEqual(decodeError(tampered)?.code, .invalidResumeData, "byte \(index)")
        }
    }

    func testForgedPayloadWithAValidChecksumButBadFieldsIsRejected() {
        func forged(_ json: String) -> Data {
            let body = Data(json.utf8)
            return Data("courier-resume 1\nsha256 \(SHA256.hexString(SHA256.hash(body)))\n".utf8) + body
        }
        let base = #""bytesOnDisk":10,"headers":{},"method":"GET","partialFile":"/tmp/.x.courier-partial""#
        XCTAssertEqual(decodeError(forged("{\(base),\"url\":\"file:///etc/passwd\"}"))?.code, .invalidResumeData)
        XCTAssertEqual(decodeError(forged("{\(base),\"url\":\"http://h/x\",\"totalLength\":5}"))?.code, .invalidResumeData)
        XCTAssertEqual(
            decodeError(forged(#"{"bytesOnDisk":-1,"headers":{},"method":"GET","partialFile":"/tmp/x","url":"http://h/x"}"#))?.code,
            .invalidResumeData)
        XCTAssertNotNil(try? ResumeData(data: forged("{\(base),\"url\":\"http://h/x\"}")))
    }

    func testOtherVersionsAndGarbageAreRejected() {
        let encoded = String(decoding: sample.encoded(), as: UTF8.self)
        XCTAssertEqual(
            decodeError(Data(encoded.replacingOccurrences(of: "courier-resume 1", with: "courier-resume 2").utf8))?.message
                .contains("version 2"), true)
        for garbage in ["", "\n\n", "courier-resume 1\n", "courier-resume 1\nsha256 zz\n{}", "{\"url\":1}"] {
            XCTAssertEqual(decodeError(Data(garbage.utf8))?.code, .invalidResumeData, garbage)
        }
        XCTAssertEqual(decodeError(Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31) }))?.code, .invalidResumeData)
    }

    func testCredentialsAreNeverStored() {
        var request = URLRequest(url: URL(string: "http://user:secret@127.0.0.1:8/x")!)
        request.setValue("Bearer t0ken", forHTTPHeaderField: "Authorization")
        request.setValue("session=abc", forHTTPHeaderField: "Cookie")
        request.setValue("Basic Zm9v", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("k", forHTTPHeaderField: "X-Api-Key")
        request.setValue("keep", forHTTPHeaderField: "X-Trace")
        let stored = ResumeData.storableHeaders(of: request, sensitive: ["x-api-key"])
        XCTAssertEqual(stored.headers, ["X-Trace": "keep"])
        XCTAssertEqual(stored.omitted, ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"], "names only")
        let namesOnly = ResumeData.storableHeaders(of: request, sensitive: [], recordingValues: false)
        XCTAssertEqual(namesOnly.headers, [:])
        XCTAssertEqual(namesOnly.omitted.count, 5)
        XCTAssertEqual(ResumeData.withoutCredentials(request.url!).absoluteString, "http://127.0.0.1:8/x")
    }

    func testOmittedHeaderNamesRoundTripAndOlderRecordsStillRead() throws {
        var resume = sample
        resume.omittedHeaders = ["Authorization", "X-Api-Key"]
        let decoded = try ResumeData(data: resume.encoded())
        XCTAssertEqual(decoded.omittedHeaders, ["Authorization", "X-Api-Key"])
        XCTAssertFalse(String(decoding: resume.encoded(), as: UTF8.self).contains("t0ken"))
        // A record written before the field existed has no such key.
        XCTAssertFalse(String(decoding: sample.encoded(), as: UTF8.self).contains("omittedHeaders"))
        XCTAssertEqual(try ResumeData(data: sample.encoded()).omittedHeaders, [])
    }

    func testRetryDelaysBackOffWithJitterAndHonourRetryAfter() {
        var policy = DownloadPolicy()
        policy.retry.initialDelay = .milliseconds(100)
        policy.retry.maximumDelay = .seconds(1)
        policy.retry.maximumRetryAfter = .seconds(5)
        for attempt in 1...6 {
            let ceiling = min(Duration.milliseconds(100) * (1 << (attempt - 1)), .seconds(1))
            let delay = policy.retry.retryDelay(attempt: attempt, retryAfter: nil)
            XCTAssertGreaterThanOrEqual(delay, ceiling / 2)
            XCTAssertLessThanOrEqual(delay, ceiling)
        }
        XCTAssertEqual(policy.retry.retryDelay(attempt: 1, retryAfter: "2"), .seconds(2))
        XCTAssertEqual(policy.retry.retryDelay(attempt: 1, retryAfter: "3600"), .seconds(5), "capped")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        XCTAssertEqual(Backoff.seconds(fromRetryAfter: "Tue, 14 Nov 2023 22:13:23 GMT", now: now), 3)
        XCTAssertNil(Backoff.seconds(fromRetryAfter: "soon", now: now))
        // The two obsolete HTTP-date forms a recipient must accept (RFC 9110 §5.6.7) mean the same
        XCTAssertEqual(Backoff.seconds(fromRetryAfter: "Tuesday, 14-Nov-23 22:13:23 GMT", now: now), 3)
        XCTAssertEqual(Backoff.seconds(fromRetryAfter: "Tue Nov 14 22:13:23 2023", now: now), 3)
    }
}

/// Resume data that must not be trusted, given to a real download.
final class UntrustedResumeDataTests: CourierTestCase {
    private func resume(_ resumeData: ResumeData, _ destination: URL) -> DownloadResponse? {
        wait { finish in
            manager.downloadTask(resumingFrom: resumeData, to: .file(destination), completion: finish).resume()
        }
    }

    func testResumeDataPointingAtAForeignFileIsRefusedAndTheFileUntouched() throws {
        let victim = directory.appendingPathComponent("important.txt")
        try Data("precious".utf8).write(to: victim)
        let forged = ResumeData(
            url: server.url("/bytes/100"), partialFile: victim, bytesOnDisk: 3, validator: "\"bytes-100-0\"",
            totalLength: 100)
        let response = resume(forged, directory.appendingPathComponent("out.bin"))
        XCTAssertEqual(response?.error?.code, .invalidResumeData)
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "precious")
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testResumeDataClaimingMoreBytesThanOnDiskIsRefused() throws {
        let partial = directory.appendingPathComponent(".short.bin.courier-partial")
        try Data(count: 10).write(to: partial)
        let claim = ResumeData(
            url: server.url("/bytes/100"), partialFile: partial, bytesOnDisk: 50, validator: "\"bytes-100-0\"",
            totalLength: 100)
        XCTAssertEqual(resume(claim, directory.appendingPathComponent("short.bin"))?.error?.code, .invalidResumeData)
    }

    func testResumeDataThroughASymlinkIsRefused() throws {
        let target = directory.appendingPathComponent("target.txt")
        try Data("keep".utf8).write(to: target)
        let link = directory.appendingPathComponent(".link.bin.courier-partial")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let claim = ResumeData(
            url: server.url("/bytes/100"), partialFile: link, bytesOnDisk: 2, validator: "\"bytes-100-0\"", totalLength: 100)
        XCTAssertEqual(resume(claim, directory.appendingPathComponent("link.bin"))?.error?.code, .invalidResumeData)
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "keep")
    }

    func testResumeDataForAnotherURLIsRefused() throws {
        let partial = directory.appendingPathComponent(".x.bin.courier-partial")
        try Data(count: 10).write(to: partial)
        let claim = ResumeData(
            url: server.url("/bytes/100"), partialFile: partial, bytesOnDisk: 10, validator: "\"v\"", totalLength: 100)
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(
                resumingFrom: claim, request: request("/bytes/200"), to: .file(directory.appendingPathComponent("x.bin")),
                completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .invalidResumeData)
    }
}
