import Foundation

/// A response's header fields as a cache keeps them: in order, names compared without case,
/// values as received (a `Set-Cookie` is stored and given back exactly as it came).
///
/// A value type with no I/O, so every rule of RFC 9111 that reads or rewrites fields is a pure
/// function of it (CachePolicy.swift).
struct CacheHeaders: Sendable, Equatable, Codable {
    /// One field line: its name as received, and its value.
    struct Field: Sendable, Equatable, Codable {
        var name: String
        var value: String
    }

    private(set) var fields: [Field]

    init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// From pairs, in order.
    init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Every value of `name` (any case), in order.
    func values(_ name: String) -> [String] {
        fields.compactMap { $0.name.caseInsensitiveCompare(name) == .orderedSame ? $0.value : nil }
    }

    /// The values of `name` combined into one list value (RFC 9110 §5.3), or `nil` when absent.
    subscript(_ name: String) -> String? {
        let found = values(name)
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    /// Whether `name` (any case) is present.
    func contains(_ name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Removes every line of `name` (any case).
    mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Replaces every line of `name` with one line holding `value`, where the first one was (or at the end).
    mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            fields[index] = Field(name: fields[index].name, value: value)
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame && $0.value != value }
            if !fields.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
                fields.append(Field(name: name, value: value))
            }
        } else {
            fields.append(Field(name: name, value: value))
        }
    }

    /// Appends a line.
    mutating func append(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The elements of a comma-separated list field (every line), trimmed, empty ones dropped.
    /// Commas inside quoted strings do not split.
    func listElements(_ name: String) -> [String] {
        values(name).flatMap { CacheHeaders.splitList($0) }
    }

    /// Splits a list value at commas outside quoted strings; trims blanks; drops empty elements.
    static func splitList(_ value: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in value {
            if escaped {
                escaped = false
                current.append(character)
                continue
            }
            if quoted && character == "\\" {
                escaped = true
                current.append(character)
                continue
            }
            if character == "\"" { quoted.toggle() }
            if character == "," && !quoted {
                elements.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        elements.append(current)
        return elements.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A dictionary for `HTTPURLResponse`: lines of one name joined with `, ` (its only form).
    var dictionary: [String: String] {
        var result: [String: String] = [:]
        var names: [String: String] = [:]  // lower-cased -> the first spelling
        for field in fields {
            let key = field.name.lowercased()
            if let spelling = names[key], let existing = result[spelling] {
                result[spelling] = existing + ", " + field.value
            } else {
                names[key] = field.name
                result[field.name] = field.value
            }
        }
        return result
    }

    /// The bytes the fields hold, for accounting.
    var byteCount: Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }
}
