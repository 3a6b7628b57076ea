import Foundation
import XCTest

/// The folders of Sources/Courier refer to each other both ways only where Docs/Architecture.md,
/// "Folder dependencies", says why (issue 33, part 4).
final class FolderDependenciesTests: XCTestCase {
    /// The repository's root, from this file's path (Tests/CourierTests/Support/…).
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The pairs Architecture.md names: the first cell of each table row of its "Folder
    /// dependencies" section that holds `↔`.
    private func documentedPairs() throws -> Set<[String]> {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)
        guard let start = text.range(of: "\n## Folder dependencies\n") else {
            XCTFail("Docs/Architecture.md has no \"## Folder dependencies\" section")
            return []
        }
        let section = text[start.upperBound...].components(separatedBy: "\n## ")[0]
        var pairs: Set<[String]> = []
        for line in section.split(separator: "\n") where line.hasPrefix("|") {
            let cell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            let folders = cell.components(separatedBy: "↔").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            }
            if folders.count == 2 { pairs.insert(folders.sorted()) }
        }
        return pairs
    }

    func testEveryTwoWayPairOfFoldersIsOneArchitectureMdNames() throws {
        // Given the sources and the pairs the architecture document allows
        let analysis = try FolderDependencies(root: Self.root.appendingPathComponent("Sources/Courier"))
        XCTAssertGreaterThan(analysis.types.count, 10, "the analysis found the folders")
        XCTAssertTrue(analysis.types["Tasks"]?.contains("TransferTask") ?? false, "the analysis found the declarations")
        let documented = try documentedPairs()
        XCTAssertFalse(documented.isEmpty)
        // When the pairs of folders that name each other's types are listed
        let found = analysis.twoWayPairs()
        // Then each is one the document names, and each the document names still exists
        for pair in found where !documented.contains([pair.first, pair.second]) {
            XCTFail(
                "\(pair): a new two-way pair. \(pair.first) names \(analysis.namedTypes(from: pair.first, to: pair.second)), "
                    + "\(pair.second) names \(analysis.namedTypes(from: pair.second, to: pair.first)). Move the type or helper "
                    + "to the folder that uses it, or say in Docs/Architecture.md (\"Folder dependencies\") why both need each other.")
        }
        let existing = Set(found.map { [$0.first, $0.second] })
        for pair in documented.subtracting(existing) {
            XCTFail("Docs/Architecture.md names \(pair[0]) ↔ \(pair[1]), which no longer refer to each other both ways: remove the row")
        }
    }

    func testCommentsAndStringTextAreNotCodeButInterpolationsAre() {
        // Given code with a line comment, a nested block comment, plain, raw and multi-line strings
        let source = ##"""
            let a = Alpha() // Beta
            /* Gamma /* Delta */ Epsilon */ let b = "Zeta \(Eta.name(of: "Theta")) Iota"
            let c = #"Kappa \(Lambda) \#(Mu)"#
            let d = """
                Nu \(Xi)
                """
            let e = "quote \" Omicron"
            """##
        // When only its code is kept
        let words = Set(FolderDependencies.words(in: FolderDependencies.codeOnly(source)).map(String.init))
        // Then the names in code and interpolations remain, and none from comments or string text
        XCTAssertEqual(words.intersection(["Alpha", "Eta", "Mu", "Xi"]), ["Alpha", "Eta", "Mu", "Xi"])
        XCTAssertTrue(
            words.isDisjoint(with: ["Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Theta", "Iota", "Kappa", "Lambda", "Nu", "Omicron"]),
            "\(words)")
        XCTAssertTrue(words.contains("e"), "the code after an escaped quote is read again")
    }

    func testOnlyTopLevelDeclarationsAreAFoldersTypes() {
        let source = """
            public final class Alpha: Sendable {
                struct Nested {}
            }
            @frozen public enum Beta { case one }
            package typealias Gamma = Int
            extension Delta { struct Epsilon {} }
            protocol Zeta<Item>: AnyObject {}
            """
        XCTAssertEqual(FolderDependencies.declaredTypes(in: source), ["Alpha", "Beta", "Gamma", "Zeta"])
    }

    func testATwoWayPairNeedsReferencesBothWaysAndCountsEach() {
        // Given A names B's type twice, B names A's once, and C names A's but A never names C's
        let analysis = FolderDependencies(files: [
            "A": ["struct AType { let b: BType; let again: BType? }"],
            "B": ["struct BType { let a: AType }"],
            "C": ["struct CType { let a: AType } // BType in a comment", "let text = \"BType\""],
        ])
        // Then only A ↔ B is a pair, with its counts, and C's comment and string name nothing
        XCTAssertEqual(
            analysis.twoWayPairs(), [FolderDependencies.Pair(first: "A", second: "B", firstToSecond: 2, secondToFirst: 1)])
        XCTAssertEqual(analysis.references(from: "C", to: "B"), 0)
    }
}
