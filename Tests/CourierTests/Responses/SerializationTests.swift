import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serializers and validation end to end, over real responses.
final class SerializationTests: CourierTestCase {
    private func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private struct Item: Decodable, Equatable, Sendable {
        let id: Int
    }

    /// Refuses every body, for the failure path.
    private struct Refusing: DataPreprocessor {
        struct Refused: Error {}
        func preprocess(_ data: Data) throws -> Data { throw Refused() }
    }

    func testAPreprocessorStripsTheXSSIPrefixBeforeTheDecoderReadsTheBody() {
        // Given a JSON body behind the anti-XSSI prefix, as some APIs send it
        let body = base64URL(Data(")]}',\n{\"id\": 7}".utf8))
        // When it is decoded through the XSSI preprocessor, and without it
        let serializer = DecodableResponseSerializer(Item.self)
        let stripped = wait { finish in
            manager.dataTask(
                with: request("/base64/\(body)?content_type=application/json"),
                serializer: serializer.preprocessed(by: XSSIPrefixPreprocessor()), completion: finish
            ).resume()
        }
        let raw = wait { finish in
            manager.dataTask(with: request("/base64/\(body)?content_type=application/json"), serializer: serializer, completion: finish)
                .resume()
        }
        // Then the preprocessed one decodes, and the plain one fails as before
        XCTAssertEqual(stripped?.value, Item(id: 7))
        XCTAssertEqual(raw?.error?.code, .decodingFailed)
    }

    func testAPreprocessorThatThrowsFailsTheResponseAsTheSerializerWould() {
        let response = wait { finish in
            manager.dataTask(
                with: request("/bytes/16"), serializer: DataResponseSerializer().preprocessed(by: Refusing()), completion: finish
            )
            .resume()
        }
        XCTAssertEqual(response?.error?.code, .decodingFailed)
        XCTAssertTrue(response?.error?.underlyingError is Refusing.Refused)
        XCTAssertEqual(response?.error?.statusCode, 200)
    }

    func testTheXSSIPreprocessorLeavesOtherBodiesAlone() throws {
        let preprocessor = XSSIPrefixPreprocessor()
        XCTAssertEqual(try preprocessor.preprocess(Data("{}".utf8)), Data("{}".utf8))
        XCTAssertEqual(try preprocessor.preprocess(Data(")]}',\r\n[1]".utf8)), Data("[1]".utf8))
        XCTAssertEqual(try preprocessor.preprocess(Data(")]}',[1]".utf8)), Data("[1]".utf8))
        XCTAssertEqual(try preprocessor.preprocess(Data(")]}".utf8)), Data(")]}".utf8))
    }

    func testStringSerializerUsesTheResponseCharset() {
        let latin1 = base64URL(Data([0x63, 0x61, 0x66, 0xE9]))
        let response = wait { finish in
            manager.dataTask(
                with: request("/base64/\(latin1)?content_type=text/plain;%20charset=iso-8859-1"), serializer: .string,
                completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.value, "café")
    }

    func testStringSerializerRejectsInvalidUTF8() {
        let response = wait { finish in
            manager.dataTask(
                with: request("/base64/\(base64URL(Data([0xC3, 0x28])))?content_type=text/plain;%20charset=utf-8"),
                serializer: .string, completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .decodingFailed)
        XCTAssertEqual(response?.error?.body, Data([0xC3, 0x28]))
        XCTAssertEqual(response?.error?.statusCode, 200)
    }

    func testJSONSerializerParsesAndCanDropNulls() {
        let plain = wait { finish in
            manager.dataTask(with: request("/json"), serializer: .json, completion: finish).resume()
        }
        XCTAssertEqual(plain?.value?["slideshow"]?["author"]?.isNull, true)
        let cleaned = wait { finish in
            manager.dataTask(with: request("/json"), serializer: .json(removesKeysWithNullValues: true), completion: finish)
                .resume()
        }
        XCTAssertNil(cleaned?.value?["slideshow"]?.dictionary?["author"])
        XCTAssertEqual(cleaned?.value?["slideshow"]?["title"]?.string, "Sample")
    }

    private struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable {
            let title: String
            let slides: [Slide]
        }
        struct Slide: Decodable, Sendable { let title: String }
        let slideshow: Show
    }

    func testDecodableSerializerDecodesTheBody() {
        let response = wait { finish in
            manager.dataTask(with: request("/json"), serializer: .decodable(Slideshow.self), completion: finish).resume()
        }
        XCTAssertEqual(response?.value?.slideshow.title, "Sample")
        XCTAssertEqual(response?.value?.slideshow.slides.map(\.title), ["One", "Two"])
    }

    func testDecodingFailureCarriesTheResponseAndBody() {
        let response = wait { finish in
            manager.dataTask(with: request("/html"), serializer: .decodable(Slideshow.self), completion: finish).resume()
        }
        XCTAssertEqual(response?.error?.code, .decodingFailed)
        XCTAssertEqual(response?.error?.statusCode, 200)
        XCTAssertTrue(String(decoding: response?.error?.body ?? Data(), as: UTF8.self).contains("<html"))
    }

    private struct LineCount: ResponseSerializer {
        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Int {
            guard response?.mimeType == "text/html" else { throw CourierError(code: .decodingFailed, message: "not html") }
            return String(decoding: data, as: UTF8.self).split(separator: "\n").count
        }
    }

    func testCustomSerializerConformingToTheProtocol() {
        let html = wait { finish in
            manager.dataTask(with: request("/html"), serializer: LineCount(), completion: finish).resume()
        }
        XCTAssertGreaterThan(html?.value ?? 0, 1)
        let json = wait { finish in
            manager.dataTask(with: request("/json"), serializer: LineCount(), completion: finish).resume()
        }
        XCTAssertEqual(json?.error?.code, .decodingFailed)
    }

    func testContentTypeValidationOverHTTP() {
        let refused = wait { finish in
            manager.dataTask(
                with: request("/html"), serializer: .data, validation: Validation(contentTypes: ["application/json"]),
                completion: finish
            ).resume()
        }
        XCTAssertEqual(refused?.error?.code, .unacceptableContentType)
        let accepted = wait { finish in
            manager.dataTask(
                with: request("/html"), serializer: .data, validation: Validation(contentTypes: ["text/*"]),
                completion: finish
            ).resume()
        }
        XCTAssertNil(accepted?.error)
    }

    /// httpbin and most frameworks put `Content-Type: text/html` on a 204: a DELETE answered that
    /// way succeeds under a JSON content-type rule, as in Alamofire; so does a HEAD answer.
    func testAnEmptyAnswerWithAContentTypePassesContentTypeValidation() throws {
        let hostile = try ScriptedServer { request, _ in
            request.method == "HEAD"
                ? .bytes("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1234\r\n\r\n")
                : .bytes("HTTP/1.1 204 No Content\r\nContent-Type: text/html; charset=utf-8\r\n\r\n")
        }
        defer { hostile.stop() }
        let json = Validation(contentTypes: ["application/json"])
        for method in ["DELETE", "HEAD"] {
            var request = URLRequest(url: hostile.url("/items/1"))
            request.httpMethod = method
            let response = data(request, validation: json)
            XCTAssertNil(response.error, "\(method): \(response.error.map(String.init(describing:)) ?? "")")
        }
        // A body of the wrong type still fails.
        let refused = data(request("/html"), validation: json)
        XCTAssertEqual(refused.error?.code, .unacceptableContentType)
    }

    func testCustomStatusCodeValidation() {
        let response = data(request("/status/404"), validation: Validation(statusCodes: [404]))
        XCTAssertNil(response.error?.code == .unacceptableStatusCode ? response.error : nil)
        XCTAssertEqual(response.response?.statusCode, 404)
    }

    /// A serializer that takes its time, so the test can cancel while it runs.
    private struct SlowSerializer: ResponseSerializer {
        let started: Counter
        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> Int {
            started.increment()
            Thread.sleep(forTimeInterval: 0.3)
            return data.count
        }
    }

    func testCancelDuringSerializationStillCompletesExactlyOnce() {
        let started = Counter()
        let task = Box<DataTask>()
        let response: DataResponse<Int>? = wait { finish in
            let created = manager.dataTask(
                with: request("/bytes/10"), serializer: SlowSerializer(started: started), completion: finish)
            task.append(created)
            created.resume()
            waitUntil("serialization starts") { started.count == 1 }
            created.cancel()
        }
        XCTAssertEqual(response?.value, 10, "the transfer had finished: the cancel came too late to matter")
        XCTAssertEqual(task.first?.state, .completed)
    }
}
