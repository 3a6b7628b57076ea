import Foundation
internal import CourierSupport

/// A multipart/form-data body, built part by part and encoded either in memory or, streaming, into a private file.
///
/// The encoding follows RFC 7578: every part starts with `--<boundary>`, carries a
/// `Content-Disposition: form-data; name="…"` header (plus `filename="…"` for files), a
/// `Content-Type` for file-like parts, then the caller's own headers in name order, a blank line
/// and the bytes; `--<boundary>--` closes the body. Send it with ``contentType`` as the request's
/// `Content-Type`:
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(field: "Ada", name: "author")
/// form.append(fileAt: reportURL, name: "report")
/// let body = directory.appendingPathComponent("upload.multipart")
/// try form.write(to: body)
/// request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
/// manager.uploadTask(with: request, from: .file(body)) { response in
///     try? FileManager.default.removeItem(at: body)
///     …
/// }.resume()
/// ```
///
/// Appending never fails and never touches the file system: files and streams are opened when
/// the body is measured or encoded, and every problem surfaces there as a ``CourierError``.
///
/// The boundary must not occur in any part. Parts held in memory (data, fields, and every
/// part's headers) are checked: when the boundary was generated here and such a part contains
/// it, appending picks a new one, so ``boundary`` and ``contentType`` always describe the body
/// that will be encoded; a boundary the caller chose fails encoding with
/// ``CourierError/Code-swift.struct/invalidRequest`` instead. File and stream parts are too big to
/// check up front, so their bytes are scanned as they are copied and encoding fails with
/// ``CourierError/Code-swift.struct/invalidRequest`` if the boundary shows up; with the
/// generated 128-bit random boundary that is practically impossible.
public struct MultipartFormData: Sendable {
    /// One part: what goes into its headers, and where its bytes come from.
    struct Part: Sendable {
        enum Content: Sendable {
            case data(Data)
            case file(URL)
            case stream(length: Int64, makeStream: @Sendable () throws -> InputStream)
        }

        let name: String
        let fileName: String?
        /// The `Content-Type` value; `nil` writes none (a plain field).
        let mimeType: String?
        let headers: [String: String]
        let content: Content
    }

    /// The boundary between parts: the one given to the initializer, or `courier.` followed by
    /// 32 random hex digits (128 bits from `SystemRandomNumberGenerator`).
    public private(set) var boundary: String
    /// Whether ``boundary`` was generated here, and so may be replaced when a part contains it.
    private let boundaryIsGenerated: Bool
    private(set) var parts: [Part] = []

    /// Creates an empty body.
    ///
    /// - Parameter boundary: the boundary to use, 1 to 70 characters from RFC 2046's set
    ///   (letters, digits, space and `'()+_,-./:=?`, not ending in a space); checked when the
    ///   body is encoded. `nil` (the default) generates a random one.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
        self.boundaryIsGenerated = boundary == nil
    }

    /// The request's `Content-Type` header value: `multipart/form-data; boundary=<boundary>`
    /// (the boundary is quoted when it contains characters a bare token may not).
    public var contentType: String {
        let isToken = !boundary.isEmpty && boundary.unicodeScalars.allSatisfy(HTTPToken.isCharacter)
        return "multipart/form-data; boundary=" + (isToken ? boundary : "\"\(boundary)\"")
    }

    /// Appends a part holding `data`.
    ///
    /// - Parameters:
    ///   - data: the part's content, sent as it is.
    ///   - name: the form field's name (`Content-Disposition: form-data; name="…"`).
    ///   - fileName: when given, the part is sent as a file with this `filename`.
    ///   - mimeType: when given, the part's `Content-Type`; without it the part has none, which
    ///     servers read as `text/plain`.
    ///   - headers: extra part headers, written after the standard ones in name order. Names must
    ///     be HTTP tokens other than `Content-Disposition` and `Content-Type`, values must not
    ///     contain CR, LF or NUL; encoding fails with
    ///     ``CourierError/Code-swift.struct/invalidRequest`` otherwise.
    public mutating func append(
        _ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil, headers: [String: String] = [:]
    ) {
        append(Part(name: name, fileName: fileName, mimeType: mimeType, headers: headers, content: .data(data)))
    }

    /// Appends a text field: `value` in UTF-8, with neither file name nor `Content-Type`.
    public mutating func append(field value: String, name: String) {
        append(Part(name: name, fileName: nil, mimeType: nil, headers: [:], content: .data(Data(value.utf8))))
    }

    /// A file part; fileName defaults to the URL's last component and mimeType to the extension table.
    ///
    /// The file is read in chunks when the body is encoded, never loaded whole. The default
    /// `Content-Type` comes from ``MIMEType/forPathExtension(_:)`` applied to the file name sent.
    /// A missing file, a directory, anything else that is not a regular file, or a file that
    /// cannot be read fails ``contentLength()``, ``encoded()`` and ``write(to:)`` with
    /// ``CourierError/Code-swift.struct/uploadSourceFailed`` naming the path. `headers` follow
    /// the rules of ``append(_:name:fileName:mimeType:headers:)``.
    public mutating func append(
        fileAt url: URL, name: String, fileName: String? = nil, mimeType: String? = nil, headers: [String: String] = [:]
    ) {
        let fileName = fileName ?? url.lastPathComponent
        let mimeType = mimeType ?? MIMEType.forFileName(fileName)
        append(Part(name: name, fileName: fileName, mimeType: mimeType, headers: headers, content: .file(url)))
    }

    /// A stream part of known length; the factory is called once per encoding.
    ///
    /// The stream is opened, read in chunks and closed on every path. It must yield exactly
    /// `length` bytes: fewer, more, a read error or a factory that throws fails encoding with
    /// ``CourierError/Code-swift.struct/uploadSourceFailed`` (``contentLength()`` does not call the
    /// factory). Without a `mimeType` the `Content-Type` comes from `fileName`'s extension, or is
    /// `application/octet-stream`. `headers` follow the rules of
    /// ``append(_:name:fileName:mimeType:headers:)``.
    public mutating func append(
        stream makeStream: @escaping @Sendable () throws -> InputStream, length: Int64, name: String,
        fileName: String? = nil, mimeType: String? = nil, headers: [String: String] = [:]
    ) {
        let mimeType = mimeType ?? fileName.map(MIMEType.forFileName) ?? MIMEType.octetStream
        let content = Part.Content.stream(length: length, makeStream: makeStream)
        append(Part(name: name, fileName: fileName, mimeType: mimeType, headers: headers, content: content))
    }

    private mutating func append(_ part: Part) {
        parts.append(part)
        // Replaced here rather than at encode time, so that `contentType` read before encoding
        // already names the boundary the body will use.
        guard boundaryIsGenerated, part.holdsInMemory(Self.delimiter(for: boundary)) else { return }
        repeat {
            boundary = Self.randomBoundary()
        } while parts.contains { $0.holdsInMemory(Self.delimiter(for: boundary)) }
    }

    /// `courier.` and 128 random bits in hex: long enough that no real content contains it.
    private static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let halves = (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
        return "courier." + halves.joined()
    }

    /// The bytes that must not occur in any part: `--` and the boundary. Stricter than the
    /// RFC 2046 delimiter (which starts with CRLF), so lenient parsers are safe too.
    static func delimiter(for boundary: String) -> [UInt8] {
        Array("--\(boundary)".utf8)
    }
}

extension MultipartFormData.Part {
    /// Whether `delimiter` occurs in what this part keeps in memory: its header strings, and its
    /// bytes for a data part.
    func holdsInMemory(_ delimiter: [UInt8]) -> Bool {
        var strings = [name] + headers.keys + headers.values
        if let fileName { strings.append(fileName) }
        if let mimeType { strings.append(mimeType) }
        if strings.contains(where: { MultipartFormData.BoundaryScanner.occurs(delimiter, in: Data($0.utf8)) }) {
            return true
        }
        if case .data(let data) = content { return MultipartFormData.BoundaryScanner.occurs(delimiter, in: data) }
        return false
    }
}
