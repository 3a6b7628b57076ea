import Foundation
import XCTest

@testable import Courier

/// `CourierError.Code` is stored by name: the queue's journal wrote names before the code was
/// typed, and must read the same bytes the same way.
final class CourierErrorCodeCodingTests: XCTestCase {
    func testEveryCodeIsWrittenAsItsNameAndReadBack() throws {
        for code in CourierError.Code.allCodes {
            let data = try JSONEncoder().encode([code])
            XCTAssertEqual(String(decoding: data, as: UTF8.self), "[\"\(code.description)\"]")
            XCTAssertEqual(try JSONDecoder().decode([CourierError.Code].self, from: data), [code])
            XCTAssertEqual(CourierError.Code(name: code.description), code)
        }
    }

    func testANameThisVersionDoesNotKnowIsADecodingError() {
        XCTAssertNil(CourierError.Code(name: "teleportFailed"))
        XCTAssertThrowsError(try JSONDecoder().decode([CourierError.Code].self, from: Data("[\"teleportFailed\"]".utf8))) {
            XCTAssertTrue($0 is DecodingError, "\($0)")
        }
    }

    func testAQueueFailureKeepsTheJournalBytesItHadWhenItsCodeWasAString() throws {
        // Given the bytes a journal held for a failed item before the code was typed
        let journaled = Data(#"{"code":"integrityFailed","message":"the body's SHA-256 differs","status":200,"isRetryable":false}"#.utf8)
        // When they are read, the code is typed
        let failure = try JSONDecoder().decode(DownloadQueue.Failure.self, from: journaled)
        XCTAssertEqual(failure.code, .integrityFailed)
        XCTAssertEqual(failure.status, 200)
        // And written again, the code is the same name
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rewritten = try JSONSerialization.jsonObject(with: try encoder.encode(failure)) as? [String: Any]
        XCTAssertEqual(rewritten?["code"] as? String, "integrityFailed")
    }
}
