import Foundation

/// A code is stored as its name (`"integrityFailed"`), the same bytes `description` gives: the
/// download queue's journal wrote names before the code was `Codable`, and reads them the same way.
extension CourierError.Code: Codable {
    /// Reads a code's name. A name this version does not know (written by a newer one) is a
    /// `DecodingError`: a journal skips such a record rather than guessing what it meant.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let code = Self(name: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "no CourierError code is named '\(name)'")
        }
        self = code
    }

    /// Writes the code's name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
