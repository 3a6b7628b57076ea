import Foundation

extension SegmentMap {
    /// The segment map as the resume record stores it (the payload's `segments` field): a
    /// version and one `[start, end, written]` triple per segment, sorted. Connections are not
    /// stored: after a stop or a crash no connection works on anything. Decoding reads at most
    /// ``SegmentMap/maximumSegments`` triples and refuses any other version, so a record that
    /// claims more is refused before it is held; whether the triples tile the file is checked
    /// when the map is built (``SegmentMap/init(url:validator:length:segments:)``).
    struct Record: Codable, Sendable, Equatable {
        /// The version this build writes and reads.
        static let currentVersion = 1

        var version: Int
        var segments: [Segment]

        init(_ segments: [Segment]) {
            version = Self.currentVersion
            self.segments = segments.map { Segment(start: $0.start, end: $0.end, written: $0.written) }
        }

        private enum CodingKeys: String, CodingKey {
            case version, ranges
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(Int.self, forKey: .version)
            guard version == Self.currentVersion else { throw SegmentMapError.unsupportedVersion(version) }
            var ranges = try container.nestedUnkeyedContainer(forKey: .ranges)
            if let count = ranges.count, count > SegmentMap.maximumSegments { throw SegmentMapError.tooManySegments(count) }
            var segments: [Segment] = []
            while !ranges.isAtEnd {
                guard segments.count < SegmentMap.maximumSegments else {
                    throw SegmentMapError.tooManySegments(segments.count + 1)
                }
                var triple = try ranges.nestedUnkeyedContainer()
                guard triple.count == 3 else { throw SegmentMapError.malformed("a range is not [start, end, written]") }
                let start = try triple.decode(Int64.self)
                let end = try triple.decode(Int64.self)
                let written = try triple.decode(Int64.self)
                segments.append(Segment(start: start, end: end, written: written))
            }
            self.segments = segments
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            var ranges = container.nestedUnkeyedContainer(forKey: .ranges)
            for segment in segments {
                try ranges.encode([segment.start, segment.end, segment.written])
            }
        }
    }

    /// This map as a record stores it.
    var record: Record { Record(segments) }
}

extension ResumeData {
    /// The record of a segmented download: the map's URL, validator and length, its written
    /// prefix as `bytesOnDisk` (what a build that knows no segments keeps and continues from),
    /// and its segments without their connections.
    init(segmentMap map: SegmentMap, headers: [String: String] = [:], partialFile: URL) {
        self.init(
            url: map.url, headers: headers, partialFile: partialFile, bytesOnDisk: map.contiguousPrefix,
            validator: map.validator, totalLength: map.length)
        segments = map.withoutConnections.segments
    }

    /// The segment map this record continues, bound to its URL, validator and length; `nil` for
    /// a single-stream record.
    var segmentMap: SegmentMap? {
        guard let segments, let validator, let totalLength else { return nil }
        return try? SegmentMap(url: url, validator: validator, length: totalLength, segments: segments)
    }

    /// Why a stored segment map cannot be continued, if it cannot: it must be bound to a
    /// validator and a length, tile the file, and agree with `bytesOnDisk`.
    static func segmentProblem(
        _ record: SegmentMap.Record, url: URL, validator: String?, totalLength: Int64?, bytesOnDisk: Int64
    )
        -> String?
    {
        guard let validator, let totalLength else { return "a segment map without a validator and a length" }
        do {
            let map = try SegmentMap(url: url, validator: validator, length: totalLength, segments: record.segments)
            guard map.contiguousPrefix == bytesOnDisk else {
                return "the segment map's written prefix (\(map.contiguousPrefix)) is not bytesOnDisk (\(bytesOnDisk))"
            }
            return nil
        } catch {
            return "the segment map is unusable: \(error)"
        }
    }
}
