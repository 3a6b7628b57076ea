import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The header diet on HTTP/2 heads (libcurl hands FoundationNetworking `HTTP/2 200` and lowercase
/// names): nginx with TLS and HTTP/2 (`ThrowawayNginx`), the only server in the tests that speaks
/// it. Skipped where nginx or openssl is missing; `.ci/run` installs nginx-light.
final class HeadDietHTTP2Tests: CourierTestCase {
    func testAnHTTP2HeadGivesTheSameResponseWithAndWithoutTheDiet() throws {
        if let reason = TLSTestPKI.unavailableReason { throw XCTSkip(reason) }
        // Given nginx over TLS and HTTP/2, answering with fields FoundationNetworking does not act
        // on, a repeated one, a cookie and the ones it does
        let pki = try TLSTestPKI()
        let nginx: ThrowawayNginx
        do {
            nginx = try ThrowawayNginx(
                pki: pki,
                locations: """
                    location / {
                        add_header X-Extra one;
                        add_header X-Extra two;
                        add_header ETag '"h2"';
                        add_header Set-Cookie 'h2=yes; Path=/';
                        add_header Content-Disposition 'attachment; filename="h2.txt"';
                        default_type text/plain;
                        return 200 'over http2';
                    }
                    """)
        } catch let unavailable as ThrowawayNginx.Unavailable {
            throw XCTSkip(unavailable.description)
        }
        defer { nginx.stop() }

        // When the same request is made with the diet on and off
        var responses: [Bool: HTTPURLResponse] = [:]
        var withheld: [Bool: UInt64] = [:]
        for diet in [true, false] {
            var configuration = makeConfiguration()
            configuration.headerDiet = diet
            configuration.tls = TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.caFile)])))
            let manager = SessionManager(configuration: configuration)
            defer { manager.invalidate(cancelingTasks: true) }
            let before = PlatformFixes.status.headerLinesWithheld ?? 0
            let response = wait { finish in
                manager.dataTask(with: URLRequest(url: nginx.url("/h2")), completion: finish).resume()
            }
            XCTAssertNil(response?.error)
            XCTAssertEqual(response?.value, Data("over http2".utf8))
            responses[diet] = try XCTUnwrap(response?.response)
            withheld[diet] = (PlatformFixes.status.headerLinesWithheld ?? 0) - before
        }

        // Then both went over HTTP/2, the diet withheld the lines FoundationNetworking does not act
        // on (server, date, content-type, content-length, both x-extra, etag, content-disposition;
        // not the cookie), and the responses are the same
        XCTAssertEqual(nginx.accessLog.components(separatedBy: "HTTP/2.0").count - 1, 2, nginx.accessLog)
        XCTAssertEqual(withheld[true], 8)
        XCTAssertEqual(withheld[false], 0)
        let on = try XCTUnwrap(responses[true])
        let off = try XCTUnwrap(responses[false])
        XCTAssertEqual(fields(on), fields(off))
        XCTAssertEqual(on.value(forHTTPHeaderField: "X-Extra"), "one, two")
        XCTAssertEqual(on.value(forHTTPHeaderField: "ETag"), "\"h2\"")
        XCTAssertEqual(on.suggestedFilename, off.suggestedFilename)
        XCTAssertEqual(on.mimeType, "text/plain")
        XCTAssertEqual(on.expectedContentLength, off.expectedContentLength)
        XCTAssertNil(on.value(forHTTPHeaderField: HeadDiet.field))
    }

    private func fields(_ response: HTTPURLResponse) -> [String: String] {
        var result: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { result[name] = value }
        return result
    }
}
