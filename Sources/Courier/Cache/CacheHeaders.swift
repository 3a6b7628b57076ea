import Foundation
internal import CourierSupport

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
        fields.compactMap { Self.sameName($0.name, name) ? $0.value : nil }
    }

    /// The values of `name` combined into one list value (RFC 9110 §5.3), or `nil` when absent.
    subscript(_ name: String) -> String? {
        let found = values(name)
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    /// Whether `name` (any case) is present.
    func contains(_ name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    /// Removes every line of `name` (any case).
    mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// Replaces every line of `name` with one line holding `value`, where the first one was (or at the end).
    mutating func set(_ name: String, _ value: String) {
        guard let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) else {
            return fields.append(Field(name: name, value: value))
        }
        let spelling = fields[first].name
        var kept = false
        fields = fields.compactMap { field in
            guard Self.sameName(field.name, name) else { return field }
            defer { kept = true }
            return kept ? nil : Field(name: spelling, value: value)
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
    /// Reads bytes, not `Character`s: it runs for every field a lookup reads.
    static func splitList(_ value: String) -> [String] {
        var elements: [String] = []
        let utf8 = value.utf8
        var start = utf8.startIndex
        var index = start
        var quoted = false
        var escaped = false
        func take(_ range: Range<String.Index>) {
            let element = trimmed(value[range])
            if !element.isEmpty { elements.append(String(element)) }
        }
        while index < utf8.endIndex {
            let byte = utf8[index]
            if escaped {
                escaped = false
            } else if quoted && byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == UInt8(ascii: ","), !quoted {
                take(start..<index)
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        take(start..<utf8.endIndex)
        return elements
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = text.utf8.firstIndex(where: { !isBlank($0) }) else { return text[text.endIndex...] }
        let last = text.utf8.lastIndex(where: { !isBlank($0) })!
        return text[first...last]
    }

    /// Field names compared as HTTP does: ASCII letters without case, byte by byte (no Foundation
    /// bridging: a lookup compares dozens of names).
    static func sameName(_ a: String, _ b: String) -> Bool {
        ASCIICase.equals(a, b)
    }

    /// A dictionary for `HTTPURLResponse`: lines of one name joined with `, ` (its only form).
    var dictionary: [String: String] {
        var result: [String: String] = [:]
        var names: [String: String] = [:]  // lower-cased -> the first spelling
        for field in fields {
            let key = ASCIICase.lowercased(field.name)
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
