import Foundation
import CourierSupport

/// A small JSON model whose objects keep their key order, so responses are byte-for-byte stable.
indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    /// An object from ordered pairs; a repeated key keeps its first position and its last value.
    static func object(lastWins pairs: [(String, String)]) -> JSONValue {
        var keys: [String] = []
        var values: [String: String] = [:]
        for (key, value) in pairs {
            if values[key] == nil { keys.append(key) }
            values[key] = value
        }
        return .object(keys.map { ($0, .string(values[$0] ?? "")) })
    }

    /// Compact JSON text.
    func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// UTF-8 bytes of the compact JSON text.
    var data: Data { Data(serialized().utf8) }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? "\(value)" : "null"
        case .string(let value): JSONString.append(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                JSONString.append(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Parses `data` as JSON (any top-level value), or returns `nil` if it is not valid JSON.
    /// Object keys come back sorted, since the parser does not report their order.
    static func parse(_ data: Data) -> JSONValue? {
        guard !data.isEmpty else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: data)
    }
}

extension JSONValue: Decodable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            let keys = object.allKeys.sorted { $0.stringValue < $1.stringValue }
            self = .object(try keys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }
}
