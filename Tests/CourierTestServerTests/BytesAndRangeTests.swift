import CourierTestServer
import Foundation
import XCTest

/// `/bytes`, `/stream-bytes`, Range, If-Range and conditional requests.
final class BytesAndRangeTests: ServerTestCase {
    private let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    func testDeterministicBytesFollowSplitmix64() {
        // The first splitmix64 output for seed 0 is 0xE220A8397B1DCDAF (little-endian bytes below).
        XCTAssertEqual([UInt8](TestServer.deterministicBytes(count: 8)), [0xAF, 0xCD, 0x1D, 0x7B, 0x39, 0xA8, 0x20, 0xE2])
        XCTAssertEqual(TestServer.deterministicBytes(count: 1000, seed: 9).count, 1000)
        XCTAssertNotEqual(TestServer.deterministicBytes(count: 64, seed: 1), TestServer.deterministicBytes(count: 64, seed: 2))
        XCTAssertEqual(TestServer.deterministicBytes(count: 5, seed: 3), TestServer.deterministicBytes(count: 9, seed: 3).prefix(5))
        XCTAssertEqual(TestServer.deterministicBytes(count: -1), Data())
    }

    func testBytesServesDeterministicContentWithValidators() throws {
        let response = try fetch("GET", "/bytes/1000?seed=42")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 1000, seed: 42))
        XCTAssertEqual(response.header("ETag"), "\"bytes-1000-42\"")
        XCTAssertEqual(response.header("Last-Modified"), lastModified)
        XCTAssertEqual(response.header("Accept-Ranges"), "bytes")
        XCTAssertEqual(response.header("Content-Type"), "application/octet-stream")
        XCTAssertEqual(response.header("Content-Length"), "1000")
        XCTAssertEqual(try fetch("GET", "/bytes/12?seed=-1").status, 400)
        XCTAssertEqual(try fetch("GET", "/bytes/x").status, 400)
    }

    func testRangeWithStartAndEndReturns206Slice() throws {
        let response = try fetch("GET", "/bytes/1000?seed=1", headers: [("Range", "bytes=13-99")])
        XCTAssertEqual(response.status, 206)
        XCTAssertEqual(response.header("Content-Range"), "bytes 13-99/1000")
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 1000, seed: 1)[13...99])
    }

    func testRangeWithOpenEndAndOversizedEndRunsToTheLastByte() throws {
        let full = TestServer.deterministicBytes(count: 100)
        let open = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=90-")])
        XCTAssertEqual(open.status, 206)
        XCTAssertEqual(open.header("Content-Range"), "bytes 90-99/100")
        XCTAssertEqual(open.body, full[90...])
        let clipped = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=95-99999999999999999999999")])
        XCTAssertEqual(clipped.header("Content-Range"), "bytes 95-99/100")
        XCTAssertEqual(clipped.body, full[95...])
    }

    func testSuffixRangeReturnsTheLastBytes() throws {
        let response = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=-7")])
        XCTAssertEqual(response.status, 206)
        XCTAssertEqual(response.header("Content-Range"), "bytes 93-99/100")
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 100)[93...])
        let whole = try fetch("GET", "/bytes/10", headers: [("Range", "bytes=-500")])
        XCTAssertEqual(whole.header("Content-Range"), "bytes 0-9/10")
    }

    func testMultiRangeIsAnsweredWithTheFullBody() throws {
        let response = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=0-1,5-6")])
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.header("Content-Range"))
        XCTAssertEqual(response.body.count, 100)
    }

    func testUnsatisfiableRangeGets416WithTotalLength() throws {
        for range in ["bytes=100-", "bytes=500-600", "bytes=-0"] {
            let response = try fetch("GET", "/bytes/100", headers: [("Range", range)])
            XCTAssertEqual(response.status, 416, range)
            XCTAssertEqual(response.header("Content-Range"), "bytes */100", range)
            XCTAssertTrue(response.body.isEmpty)
        }
    }

    func testMalformedRangeIsIgnored() throws {
        for range in ["bytes=abc", "items=0-1", "bytes=5-2", "bytes", "bytes=--1", "bytes=1-2-3"] {
            let response = try fetch("GET", "/bytes/50", headers: [("Range", range)])
            XCTAssertEqual(response.status, 200, range)
            XCTAssertEqual(response.body.count, 50, range)
        }
    }

    func testRangeWithIfRangeMatchingETagOrDateIsHonoured() throws {
        for validator in ["\"bytes-100-0\"", lastModified] {
            let response = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=10-19"), ("If-Range", validator)])
            XCTAssertEqual(response.status, 206, validator)
            XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 100)[10...19])
        }
    }

    func testRangeWithIfRangeMismatchReturnsFullBody() throws {
        for validator in ["\"bytes-100-1\"", "W/\"bytes-100-0\"", "Thu, 22 Oct 2015 07:28:00 GMT"] {
            let response = try fetch("GET", "/bytes/100", headers: [("Range", "bytes=10-19"), ("If-Range", validator)])
            XCTAssertEqual(response.status, 200, validator)
            XCTAssertEqual(response.body.count, 100)
        }
    }

    func testWeakETagIsNeverMatchedByIfRange() throws {
        let weak = try fetch("GET", "/bytes/100?weak_etag=1")
        XCTAssertEqual(weak.header("ETag"), "W/\"bytes-100-0\"")
        for validator in ["W/\"bytes-100-0\"", "\"bytes-100-0\""] {
            let response = try fetch("GET", "/bytes/100?weak_etag=1", headers: [("Range", "bytes=0-9"), ("If-Range", validator)])
            XCTAssertEqual(response.status, 200, validator)
        }
    }

    func testIgnoreRangeAndNoValidatorsOptions() throws {
        let ignored = try fetch("GET", "/bytes/100?ignore_range=1", headers: [("Range", "bytes=0-9")])
        XCTAssertEqual(ignored.status, 200)
        XCTAssertEqual(ignored.body.count, 100)
        XCTAssertNil(ignored.header("Accept-Ranges"))
        let bare = try fetch("GET", "/bytes/100?no_validators=1")
        XCTAssertNil(bare.header("ETag"))
        XCTAssertNil(bare.header("Last-Modified"))
        let dateIfRange = try fetch("GET", "/bytes/100?no_validators=1", headers: [("Range", "bytes=0-9"), ("If-Range", lastModified)])
        XCTAssertEqual(dateIfRange.status, 200)
    }

    func testConditionalGetAnswers304() throws {
        let byTag = try fetch("GET", "/bytes/100", headers: [("If-None-Match", "\"other\", W/\"bytes-100-0\"")])
        XCTAssertEqual(byTag.status, 304)
        XCTAssertEqual(byTag.header("ETag"), "\"bytes-100-0\"")
        let byDate = try fetch("GET", "/bytes/100", headers: [("If-Modified-Since", lastModified)])
        XCTAssertEqual(byDate.status, 304)
        XCTAssertEqual(try fetch("GET", "/bytes/100", headers: [("If-None-Match", "\"other\"")]).status, 200)
        XCTAssertEqual(try fetch("GET", "/bytes/100", headers: [("If-Modified-Since", "Tue, 20 Oct 2015 07:28:00 GMT")]).status, 200)
    }

    func testHeadSendsHeadersWithoutBodyOnAnyRoute() throws {
        let client = try connect()
        let bytes = try client.request("HEAD", "/bytes/100")
        XCTAssertEqual(bytes.status, 200)
        XCTAssertEqual(bytes.header("Content-Length"), "100")
        XCTAssertEqual(bytes.header("ETag"), "\"bytes-100-0\"")
        let ranged = try client.request("HEAD", "/bytes/100", headers: [("Range", "bytes=0-9")])
        XCTAssertEqual(ranged.status, 206)
        XCTAssertEqual(ranged.header("Content-Length"), "10")
        let get = try client.request("HEAD", "/get")
        XCTAssertEqual(get.header("Content-Type"), "application/json")
        // Any stray body bytes would corrupt this response.
        let after = try client.request("GET", "/bytes/4?seed=5")
        XCTAssertEqual(after.body, TestServer.deterministicBytes(count: 4, seed: 5))
    }

    func testStreamBytesIsChunkedAndDechunksToTheSameBytes() throws {
        let response = try fetch("GET", "/stream-bytes/5000?seed=3&chunk_size=700")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.wasChunked)
        XCTAssertFalse(response.truncated)
        XCTAssertNil(response.header("Content-Length"))
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 5000, seed: 3))

        let client = try connect()
        try client.sendRequest("GET", "/stream-bytes/1500?chunk_size=700", headers: [("Connection", "close")])
        let raw = try client.readToEnd()
        let bodyStart = try XCTUnwrap(raw.range(of: Data("\r\n\r\n".utf8))).upperBound
        XCTAssertEqual(raw[bodyStart..<(bodyStart + 5)], Data("2bc\r\n".utf8), "first chunk is 700 bytes")
        var tail = Data("\r\n64\r\n".utf8)
        tail.append(TestServer.deterministicBytes(count: 1500)[1400...])
        tail.append(Data("\r\n0\r\n\r\n".utf8))
        XCTAssertEqual(raw.suffix(tail.count), tail, "last chunk is 100 (0x64) bytes, then the terminator")
    }
}

final class RangeShiftTests: ServerTestCase {
    func testRangeShiftAnswersEarlierThanAsked() throws {
        let response = try connect().request("GET", "/bytes/1000?seed=2&range_shift=100", headers: [("Range", "bytes=500-")])
        XCTAssertEqual(response.status, 206)
        XCTAssertEqual(response.header("Content-Range"), "bytes 400-999/1000")
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 1000, seed: 2).subdata(in: 400..<1000))
    }
}
