import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What Courier needs to continue a download: produced by
/// ``CourierTask/cancel(producingResumeData:)`` and attached to a failed download's error
/// (``CourierError/resumeData``), written beside the partial file as a crash-safe record, and
/// consumed by ``SessionManager/downloadTask(resumingFrom:request:to:policy:validation:queue:progress:completion:)``.
///
/// URLSession on Linux produces none (`cancel(byProducingResumeData:)` hands back nil), so this
/// is Courier's own, versioned format (see `Docs/ResumableDownloads.md`). It never holds
/// credentials: `Authorization`, `Proxy-Authorization`, `Cookie`, any header the policy marks
/// sensitive, and a URL's user and password are left out, so resuming needs them supplied again.
///
/// It is `Codable` too, as the same JSON object the record's payload holds, so a service can keep
/// it in its own store; decoding applies the same checks as ``init(data:)``.
public struct ResumeData: Sendable, Equatable, Codable {
    /// The format version this build writes and reads.
    public static let formatVersion = 1

    /// The resource, without user or password.
    public var url: URL
    /// The request method (always `GET` for downloads Courier can resume).
    public var method: String
    /// The request's non-secret headers.
    public var headers: [String: String]
    /// The partial file holding the first ``bytesOnDisk`` bytes.
    public var partialFile: URL
    /// The bytes written to ``partialFile`` and flushed before this record was made.
    public var bytesOnDisk: Int64
    /// The strong validator for `If-Range`: a strong ETag, else `Last-Modified`; `nil` if the
    /// server gave none (resuming then starts over unless the policy opts in).
    public var validator: String?
    /// The complete length of the resource, when known.
    public var totalLength: Int64?
    /// The names (never the values) of request headers left out as secrets — credentials,
    /// caller-marked sensitive headers, or every header when ``DownloadPolicy/recordsHeaders`` is
    /// off — so a caller knows what to supply again in the request it resumes with.
    public var omittedHeaders: [String] = []
    /// The segments of a download split over several connections, without their connections
    /// (``SegmentMap``); `nil` for a single stream, whose record is unchanged by them. Set only
    /// through ``init(segmentMap:headers:partialFile:)`` and read through ``segmentMap``.
    var segments: [SegmentMap.Segment]? = nil

    /// Creates resume data; Courier makes these for you.
    public init(
        url: URL, method: String = "GET", headers: [String: String] = [:], partialFile: URL, bytesOnDisk: Int64,
        validator: String?, totalLength: Int64?
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.partialFile = partialFile
        self.bytesOnDisk = bytesOnDisk
        self.validator = validator
        self.totalLength = totalLength
    }

    /// Headers never written into resume data, in lower case.
    static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]
    /// Headers Courier sets itself on a resumed request.
    static let resumeHeaders: Set<String> = ["range", "if-range", "accept-encoding"]

    /// The request's headers minus credentials, caller-marked secrets and Courier's own (all of
    /// them unless `recordingValues`), and the names of the secrets left out.
    static func storableHeaders(
        of request: URLRequest, sensitive: Set<String>, recordingValues: Bool = true
    )
        -> (headers: [String: String], omitted: [String])
    {
        let fields = (request.allHTTPHeaderFields ?? [:]).filter { !resumeHeaders.contains($0.key.lowercased()) }
        let secret = secretHeaders.union(sensitive.map { $0.lowercased() })
        let kept = recordingValues ? fields.filter { !secret.contains($0.key.lowercased()) } : [:]
        let omitted = fields.keys.filter { kept[$0] == nil }.sorted()
        return (kept, omitted)
    }

    /// `url` without user and password.
    static func withoutCredentials(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.user != nil || components.password != nil
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }
}

extension ResumeData {
    /// The payload fields, in the JSON the format stores.
    private struct Payload: Codable {
        var url: String
        var method: String
        var headers: [String: String]
        var partialFile: String
        var bytesOnDisk: Int64
        var validator: String?
        var totalLength: Int64?
        /// Absent in records written before it existed (same format version: readers ignore it).
        var omittedHeaders: [String]?
        /// Only in the record of a segmented download: its segment map (versioned by itself).
        /// A reader that does not know the field (builds before it) ignores it and continues
        /// from `bytesOnDisk`, the map's written prefix, as one stream: safe, since every
        /// segment's bytes start at a range's start.
        var segments: SegmentMap.Record?
    }

    private static let magic = "courier-resume"

    /// The serialized form:
    /// ```
    /// courier-resume 1
    /// sha256 <hex of the payload bytes>
    /// <payload: one JSON object>
    /// ```
    /// The checksum detects truncation and corruption; any change to the payload is refused.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings and integers cannot fail.
        let body = (try? encoder.encode(payload)) ?? Data()
        var data = Data("\(Self.magic) \(Self.formatVersion)\nsha256 \(SHA256.hexString(SHA256.hash(body)))\n".utf8)
        data.append(body)
        return data
    }

    /// Reads resume data, refusing anything truncated, altered, of another version, or
    /// inconsistent, with ``CourierError/Code-swift.struct/invalidResumeData``.
    public init(data: Data) throws(CourierError) {
        func invalid(_ why: String) -> CourierError {
            CourierError(code: .invalidResumeData, message: "the resume data is unusable: \(why)")
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, let first = String(data: Data(lines[0]), encoding: .utf8),
            let second = String(data: Data(lines[1]), encoding: .utf8)
        else { throw invalid("not Courier resume data, or truncated") }
        let header = first.split(separator: " ")
        guard header.count == 2, header[0] == Self.magic else { throw invalid("not Courier resume data") }
        guard header[1] == "\(Self.formatVersion)" else { throw invalid("format version \(header[1]) is not supported") }
        guard second.hasPrefix("sha256 "), let expected = SHA256.parseHex(String(second.dropFirst(7))) else {
            throw invalid("the integrity line is missing or malformed")
        }
        let body = Data(lines[2])
        guard SHA256.hash(body) == expected else { throw invalid("the checksum does not match (truncated or altered)") }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: body)
        } catch let problem as SegmentMapError {
            throw invalid("the segment map is unusable: \(problem)")
        } catch {
            throw invalid("the payload is malformed")
        }
        try self.init(payload)
    }

    /// Resume data from its payload, refusing what cannot be right.
    private init(_ payload: Payload) throws(CourierError) {
        func invalid(_ why: String) -> CourierError {
            CourierError(code: .invalidResumeData, message: "the resume data is unusable: \(why)")
        }
        guard let url = URL(string: payload.url), url.scheme == "http" || url.scheme == "https" else {
            throw invalid("the URL is not http or https")
        }
        guard payload.bytesOnDisk >= 0, payload.totalLength.map({ $0 >= payload.bytesOnDisk }) ?? true else {
            throw invalid("the byte counts are inconsistent")
        }
        guard payload.partialFile.hasPrefix("/") else { throw invalid("the partial file path is not absolute") }
        if let record = payload.segments,
            let problem = Self.segmentProblem(
                record, url: url, validator: payload.validator, totalLength: payload.totalLength, bytesOnDisk: payload.bytesOnDisk)
        {
            throw invalid(problem)
        }
        self.init(
            url: url, method: payload.method, headers: payload.headers,
            partialFile: URL(fileURLWithPath: payload.partialFile), bytesOnDisk: payload.bytesOnDisk,
            validator: payload.validator, totalLength: payload.totalLength)
        self.omittedHeaders = payload.omittedHeaders ?? []
        self.segments = payload.segments?.segments
    }

    /// The stored payload of this resume data.
    private var payload: Payload {
        Payload(
            url: url.absoluteString, method: method, headers: headers, partialFile: partialFile.path,
            bytesOnDisk: bytesOnDisk, validator: validator, totalLength: totalLength,
            omittedHeaders: omittedHeaders.isEmpty ? nil : omittedHeaders, segments: segments.map(SegmentMap.Record.init))
    }

    /// Decodes the payload's JSON object, with the checks of ``init(data:)`` (the integrity line
    /// belongs to the record file, not to this form). A value that fails them throws
    /// `DecodingError.dataCorrupted` whose underlying error is the ``CourierError``.
    public init(from decoder: any Decoder) throws {
        let payload: Payload
        do {
            payload = try Payload(from: decoder)
        } catch let problem as SegmentMapError {
            let error = CourierError(
                code: .invalidResumeData, message: "the resume data is unusable: the segment map is unusable: \(problem)")
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message, underlyingError: error))
        }
        do {
            try self.init(payload)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message, underlyingError: error))
        }
    }

    /// Encodes the payload's JSON object: the fields of ``encoded()`` without its header lines.
    public func encode(to encoder: any Encoder) throws {
        try payload.encode(to: encoder)
    }
}
