import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decodes the body as text.
///
/// The encoding comes from the `charset` parameter of `Content-Type`. When there is none, or it
/// names a charset Courier does not know, ``fallbackEncoding`` is used (UTF-8 unless you say
/// otherwise: what nearly every API sends, and a superset of ASCII). Bytes that are not valid in
/// the chosen encoding are an error, never replacement characters.
public struct StringResponseSerializer: ResponseSerializer {
    /// The encoding used when the response names none (or one Courier does not know).
    public var fallbackEncoding: String.Encoding
    /// Which empty bodies are fine (they decode to `""`).
    public var emptyResponsePolicy: EmptyResponsePolicy

    /// Creates the serializer.
    public init(fallbackEncoding: String.Encoding = .utf8, emptyResponsePolicy: EmptyResponsePolicy = .standard) {
        self.fallbackEncoding = fallbackEncoding
        self.emptyResponsePolicy = emptyResponsePolicy
    }

    /// The text of the body.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data) throws -> String {
        if data.isEmpty {
            guard emptyResponsePolicy.allowsEmptyBody(request: request, response: response) else {
                throw emptyResponsePolicy.emptyError(request: request, response: response)
            }
            return ""
        }
        let encoding = response?.textEncodingName.flatMap(Self.encoding(forCharset:)) ?? fallbackEncoding
        guard let text = String(data: data, encoding: encoding) else {
            throw CourierError(
                code: .decodingFailed,
                message: "the body is not valid \(encoding) text (\(data.count) bytes)",
                url: request?.url, response: response, body: data)
        }
        return text
    }

    /// Maps an IANA charset name (case-insensitive) to an encoding; `nil` for unknown names.
    /// A table of our own: `CFStringConvertIANACharSetNameToEncoding` is not available on Linux.
    public static func encoding(forCharset name: String) -> String.Encoding? {
        let key = name.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        switch key {
        case "utf-8", "utf8": return .utf8
        case "us-ascii", "ascii", "ansi_x3.4-1968": return .ascii
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1": return .isoLatin1
        case "iso-8859-2", "latin2": return .isoLatin2
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1250", "cp1250": return .windowsCP1250
        case "windows-1251", "cp1251": return .windowsCP1251
        case "utf-16": return .utf16
        case "utf-16be": return .utf16BigEndian
        case "utf-16le": return .utf16LittleEndian
        case "utf-32": return .utf32
        case "utf-32be": return .utf32BigEndian
        case "utf-32le": return .utf32LittleEndian
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        default: return nil
        }
    }
}

extension ResponseSerializer where Self == StringResponseSerializer {
    /// The body as text (charset from `Content-Type`, UTF-8 when none is given).
    public static var string: StringResponseSerializer { StringResponseSerializer() }
}
