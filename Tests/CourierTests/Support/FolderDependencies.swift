import Foundation

/// Which folders of a source tree name each other's types (Docs/Architecture.md, "Folder
/// dependencies"; Docs/bench/folder-deps.sh prints the same table from a shell).
///
/// A folder is a directory holding `.swift` files; a subfolder is a folder of its own
/// (`Downloads/Segmented`). Its types are the names declared at the top level of its files
/// (`struct`, `class`, `enum`, `protocol`, `actor`, `typealias`). Folder A uses folder B when a
/// file of A names one of B's types as a whole word outside comments and string literals (an
/// interpolation's code counts).
struct FolderDependencies {
    /// One two-way pair: `first` < `second`, with how often each names the other's types.
    struct Pair: Equatable, CustomStringConvertible {
        let first: String
        let second: String
        let firstToSecond: Int
        let secondToFirst: Int

        var description: String { "\(first) ↔ \(second) (\(firstToSecond), \(secondToFirst))" }
    }

    /// How often each identifier occurs in each folder's code (comments and string text removed).
    private(set) var words: [String: [String: Int]] = [:]
    /// Each folder's top-level type names.
    private(set) var types: [String: Set<String>] = [:]

    /// The analysis of every `.swift` file under `root`.
    init(root: URL) throws {
        let rootPath = root.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: rootPath) else { return }
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOfFile: rootPath + "/" + relative, encoding: .utf8)
            let folder = (relative as NSString).deletingLastPathComponent
            self.add(text, folder: folder.isEmpty ? "." : folder)
        }
    }

    /// An analysis of the given files: folder name → the texts of its files (for the pure tests).
    init(files: [String: [String]]) {
        for (folder, texts) in files { for text in texts { add(text, folder: folder) } }
    }

    private mutating func add(_ text: String, folder: String) {
        let stripped = Self.codeOnly(text)
        for word in Self.words(in: stripped) { words[folder, default: [:]][String(word), default: 0] += 1 }
        types[folder, default: []].formUnion(Self.declaredTypes(in: stripped))
    }

    /// How many times `from`'s code names one of `to`'s types.
    func references(from: String, to: String) -> Int {
        guard let names = types[to], let counts = words[from] else { return 0 }
        return names.reduce(0) { $0 + counts[$1, default: 0] }
    }

    /// Which of `to`'s types `from`'s code names, for a failure message.
    func namedTypes(from: String, to: String) -> [String] {
        guard let names = types[to], let counts = words[from] else { return [] }
        return names.filter { counts[$0] != nil }.sorted()
    }

    /// Every pair of folders that name each other's types, sorted by name.
    func twoWayPairs() -> [Pair] {
        let folders = types.keys.sorted()
        var pairs: [Pair] = []
        for (index, first) in folders.enumerated() {
            for second in folders[(index + 1)...] {
                let there = references(from: first, to: second)
                guard there > 0 else { continue }
                let back = references(from: second, to: first)
                if back > 0 { pairs.append(Pair(first: first, second: second, firstToSecond: there, secondToFirst: back)) }
            }
        }
        return pairs
    }

    // MARK: - Pure text rules

    private static let declarationKeywords: Set<Substring> = ["struct", "class", "enum", "protocol", "actor", "typealias"]
    private static let modifiers: Set<Substring> = [
        "public", "package", "internal", "fileprivate", "private", "final", "indirect", "nonisolated",
    ]

    /// The names declared at the top level (a line starting in column 0) of `code`.
    static func declaredTypes(in code: String) -> Set<String> {
        var names: Set<String> = []
        for line in code.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            var tokens = line.split(separator: " ")[...]
            while let token = tokens.first, modifiers.contains(token) || token.hasPrefix("@") { tokens.removeFirst() }
            guard let keyword = tokens.first, declarationKeywords.contains(keyword), tokens.count > 1 else { continue }
            let name = tokens[tokens.startIndex + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty { names.insert(String(name)) }
        }
        return names
    }

    /// The identifiers of `code`: runs of letters, digits and `_` (as `grep -w` reads words).
    static func words(in code: String) -> [Substring] {
        code.split { !($0.isLetter || $0.isNumber || $0 == "_") }.filter { !($0.first?.isNumber ?? true) }
    }

    /// `source` without comments (`//`, nested `/* */`) and without the text of string literals
    /// (`"…"`, `"""…"""`, raw `#"…"#`); the code of an interpolation `\(…)` is kept.
    static func codeOnly(_ source: String) -> String {
        let bytes = Array(source.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        // What encloses the current position: a literal (its quote count and `#`s), or an
        // interpolation's code (its open parentheses).
        enum Frame {
            case literal(multiline: Bool, hashes: Int)
            case interpolation(depth: Int)
        }
        var stack: [Frame] = []
        var index = 0
        func at(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
        func hashes(from start: Int) -> Int {
            var count = 0
            while start + count < bytes.count, bytes[start + count] == UInt8(ascii: "#") { count += 1 }
            return count
        }
        let quote = UInt8(ascii: "\""), slash = UInt8(ascii: "/"), star = UInt8(ascii: "*"), backslash = UInt8(ascii: "\\")
        while index < bytes.count {
            let byte = bytes[index]
            if case .literal(let multiline, let hashCount)? = stack.last {
                if byte == backslash, hashes(from: index + 1) >= hashCount, at(1 + hashCount) == UInt8(ascii: "(") {
                    stack.append(.interpolation(depth: 0))
                    output.append(UInt8(ascii: " "))
                    index += 2 + hashCount
                } else if byte == backslash, hashCount == 0 {
                    index += 2
                } else if byte == quote, !multiline || (at(1) == quote && at(2) == quote),
                    hashes(from: index + (multiline ? 3 : 1)) >= hashCount
                {
                    stack.removeLast()
                    output.append(contentsOf: [quote, quote])
                    index += (multiline ? 3 : 1) + hashCount
                } else {
                    if byte == UInt8(ascii: "\n") { output.append(byte) }
                    index += 1
                }
                continue
            }
            if byte == slash, at(1) == slash {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if byte == slash, at(1) == star {
                var depth = 0
                repeat {
                    if at(0) == slash, at(1) == star {
                        depth += 1
                        index += 2
                    } else if at(0) == star, at(1) == slash {
                        depth -= 1
                        index += 2
                    } else {
                        if bytes[index] == UInt8(ascii: "\n") { output.append(UInt8(ascii: "\n")) }
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            } else if byte == quote || (byte == UInt8(ascii: "#") && at(hashes(from: index)) == quote) {
                let hashCount = hashes(from: index)
                let start = index + hashCount
                let multiline = start + 2 < bytes.count && bytes[start + 1] == quote && bytes[start + 2] == quote
                stack.append(.literal(multiline: multiline, hashes: hashCount))
                index = start + (multiline ? 3 : 1)
            } else {
                if case .interpolation(let depth)? = stack.last {
                    if byte == UInt8(ascii: "(") {
                        stack[stack.count - 1] = .interpolation(depth: depth + 1)
                    } else if byte == UInt8(ascii: ")") {
                        if depth == 0 {
                            stack.removeLast()
                            index += 1
                            continue
                        }
                        stack[stack.count - 1] = .interpolation(depth: depth - 1)
                    }
                }
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
