import XCTest

@testable import Courier

/// The segment map in the resume record (SegmentMap+Record.swift, ResumeData.swift): versioned,
/// bounded, bound to URL, validator and length, and without effect on single-stream records.
final class SegmentRecordTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:8/big.bin")!
    private let partial = URL(fileURLWithPath: "/tmp/.big.bin.courier-partial")

    private func decodeError(_ data: Data) -> CourierError? {
        do {
            _ = try ResumeData(data: data)
            return nil
        } catch { return error }
    }

    /// A record with a valid checksum around `json`: what only a forger or a bug writes.
    private func forged(_ json: String) -> Data {
        let body = Data(json.utf8)
        return Data("courier-resume 1\nsha256 \(SHA256.hexString(SHA256.hash(body)))\n".utf8) + body
    }

    private func segmented(_ ranges: String, bytesOnDisk: Int64 = 100, total: Int64 = 1000, validator: String? = "\\\"v1\\\"") -> Data {
        let validatorField = validator.map { ",\"validator\":\"\($0)\"" } ?? ""
        return forged(
            #"{"bytesOnDisk":\#(bytesOnDisk),"headers":{},"method":"GET","partialFile":"/tmp/.x.courier-partial","#
                + #""segments":\#(ranges),"totalLength":\#(total),"url":"http://h/x"\#(validatorField)}"#)
    }

    private func sampleMap() throws -> SegmentMap {
        var map = SegmentMap(url: url, validator: "\"v1\"", length: 1000)
        try map.assign(ConnectionID(1), range: 0..<1000)
        try map.assign(ConnectionID(2), range: 500..<1000)
        _ = try map.advance(ConnectionID(1), by: 100)
        _ = try map.advance(ConnectionID(2), by: 250)
        return map
    }

    func testASegmentedRecordRoundTripsWithoutItsConnections() throws {
        // Given a map with two connections at work
        let map = try sampleMap()
        let record = ResumeData(segmentMap: map, headers: ["X-Trace": "1"], partialFile: partial)
        // When it is written and read back, in both forms
        let read = try ResumeData(data: record.encoded())
        let decoded = try JSONDecoder().decode(ResumeData.self, from: JSONEncoder().encode(record))
        // Then the same segments come back, bound to the same resource, with no connection
        XCTAssertEqual(read, record)
        XCTAssertEqual(decoded, record)
        XCTAssertEqual(read.segmentMap, map.withoutConnections)
        XCTAssertEqual(read.bytesOnDisk, 100, "the written prefix: what a build without segments continues from")
        XCTAssertEqual(read.totalLength, 1000)
        XCTAssertEqual(read.validator, "\"v1\"")
        XCTAssertTrue(
            String(decoding: record.encoded(), as: UTF8.self).contains(#""segments":{"ranges":[[0,500,100],[500,1000,250]],"version":1}"#))
    }

    func testASingleStreamRecordIsWrittenExactlyAsBefore() throws {
        // Given today's single-stream record
        let record = ResumeData(
            url: url, headers: ["X-Trace": "1"], partialFile: partial, bytesOnDisk: 1234, validator: "\"v1\"", totalLength: 5000)
        // When / Then: no new field, and it has no segment map
        let payload = String(decoding: record.encoded(), as: UTF8.self).split(separator: "\n")[2]
        XCTAssertEqual(
            String(payload),
            #"{"bytesOnDisk":1234,"headers":{"X-Trace":"1"},"method":"GET","partialFile":"\/tmp\/.big.bin.courier-partial","totalLength":5000,"url":"http:\/\/127.0.0.1:8\/big.bin","validator":"\"v1\""}"#
        )
        XCTAssertNil(try ResumeData(data: record.encoded()).segmentMap)
    }

    func testARecordWrittenBeforeSegmentsStillReads() throws {
        let old = forged(
            #"{"bytesOnDisk":10,"headers":{},"method":"GET","partialFile":"/tmp/.x.courier-partial","url":"http://h/x","validator":"v1"}"#)
        let read = try ResumeData(data: old)
        XCTAssertEqual(read.bytesOnDisk, 10)
        XCTAssertNil(read.segments)
    }

    func testAValidForgedSegmentedRecordReads() throws {
        let read = try ResumeData(data: segmented(#"{"version":1,"ranges":[[0,500,100],[500,1000,0]]}"#))
        XCTAssertEqual(read.segmentMap?.segments.map(\.written), [100, 0])
    }

    func testDamagedOrHostileSegmentMapsAreRefusedWithATypedError() {
        let tooMany = "[" + (0..<1025).map { "[\($0),\($0 + 1),0]" }.joined(separator: ",") + "]"
        let rows: [(String, Data, String)] = [
            ("over the segment bound", segmented(#"{"version":1,"ranges":\#(tooMany)}"#, bytesOnDisk: 0, total: 1025), "1025 segments"),
            ("another version", segmented(#"{"version":2,"ranges":[[0,1000,100]]}"#), "version 2"),
            ("overlapping ranges", segmented(#"{"version":1,"ranges":[[0,600,100],[500,1000,0]]}"#), "overlap at byte 500"),
            ("a gap", segmented(#"{"version":1,"ranges":[[0,400,100],[500,1000,0]]}"#), "400..<500"),
            ("short of the length", segmented(#"{"version":1,"ranges":[[0,900,100]]}"#), "900..<1000"),
            ("past the length", segmented(#"{"version":1,"ranges":[[0,1001,100]]}"#), "out of bounds"),
            ("more written than the range", segmented(#"{"version":1,"ranges":[[0,100,101],[100,1000,0]]}"#), "out of bounds"),
            ("negative", segmented(#"{"version":1,"ranges":[[0,500,-1],[500,1000,0]]}"#), "out of bounds"),
            ("not a triple", segmented(#"{"version":1,"ranges":[[0,1000]]}"#), "[start, end, written]"),
            ("a prefix other than bytesOnDisk", segmented(#"{"version":1,"ranges":[[0,1000,100]]}"#, bytesOnDisk: 900), "bytesOnDisk"),
            ("no validator", segmented(#"{"version":1,"ranges":[[0,1000,100]]}"#, validator: nil), "without a validator"),
            ("a number past Int64", segmented(#"{"version":1,"ranges":[[0,99999999999999999999,0]]}"#), "malformed"),
        ]
        for (name, data, words) in rows {
            let error = decodeError(data)
            XCTAssertEqual(error?.code, .invalidResumeData, name)
            XCTAssertTrue(error?.message.contains(words) == true, "\(name): \(error?.message ?? "accepted")")
        }
    }

    func testTheCodableFormRefusesAHostileMapWithTheCourierErrorUnderneath() throws {
        // Given the payload form with another segment-map version
        let json =
            #"{"bytesOnDisk":0,"headers":{},"method":"GET","partialFile":"/tmp/.x.courier-partial","#
            + #""segments":{"version":9,"ranges":[]},"totalLength":0,"url":"http://h/x","validator":"v"}"#
        // When / Then
        XCTAssertThrowsError(try JSONDecoder().decode(ResumeData.self, from: Data(json.utf8))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual((context.underlyingError as? CourierError)?.code, .invalidResumeData)
        }
    }
}
