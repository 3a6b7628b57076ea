import Foundation
import XCTest

@testable import Courier

/// Docs/Retries.md against the code: its "Who retries what" table has one row per
/// ``RetryOwner``, named in its Owner column, and no other; and the one place that drops a held
/// body is ``TransferState/startOver(_:)``. Reads the repository's files; no socket, no clock.
final class RetriesDocTests: XCTestCase {
    /// The repository's root: this file is Tests/CourierTests/Interceptors/RetriesDocTests.swift.
    private let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The cells of the Owner column of the first table under `## Who retries what`, one per row.
    private func ownerColumn() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("Docs/Retries.md"), encoding: .utf8)
        let section =
            try XCTUnwrap(text.components(separatedBy: "\n## Who retries what\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        // The first table of the section: its lines up to the first that is not a table line.
        let lines = section.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("|") }
        let rows = lines.prefix { $0.hasPrefix("|") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let header = try XCTUnwrap(rows.first, "the table")
        let column = try XCTUnwrap(header.firstIndex(of: "Owner"), "an Owner column in \(header)")
        // The header, then the `---` line, then the rows.
        return rows.dropFirst(2).map { $0.indices.contains(column) ? $0[column] : "" }
    }

    func testTheDocsTableNamesEveryRetryOwnerOnceAndNoOther() throws {
        // Given the doc's Owner column and the owners the code names
        let cells = try ownerColumn()
        // Then each row names one owner, in backticks, as RetryOwner spells it
        let named = cells.map { cell -> String in
            let parts = cell.components(separatedBy: "`")
            XCTAssertEqual(parts.count, 3, "one `name` per row: \(cell)")
            return parts.count == 3 ? parts[1] : cell
        }
        // And the rows are RetryOwner.all, in its order, each once
        XCTAssertEqual(named, RetryOwner.all.map(\.name))
        // And every name the code has is a distinct row
        XCTAssertEqual(Set(named).count, named.count)
    }

    func testOnlyStartOverDropsAHeldBody() throws {
        // Given every source file of the transfer
        let tasks = root.appendingPathComponent("Sources/Courier/Tasks")
        let files = try FileManager.default.contentsOfDirectory(atPath: tasks.path).filter { $0.hasSuffix(".swift") }
        var callers: [String] = []
        for file in files {
            let lines = try String(contentsOf: tasks.appendingPathComponent(file), encoding: .utf8).split(separator: "\n")
            for line in lines
            where line.contains("resetBody()") && !line.contains("func resetBody()")
                && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
            {
                callers.append("\(file): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        // Then the body is dropped in one place: inside startOver(_:)
        XCTAssertEqual(callers, ["TransferState+Downloads.swift: resetBody()"], "callers of resetBody(): \(callers)")
        let downloads = try String(contentsOf: tasks.appendingPathComponent("TransferState+Downloads.swift"), encoding: .utf8)
        let after = try XCTUnwrap(downloads.components(separatedBy: "mutating func startOver(_ cause: StartOverCause)").dropFirst().first)
        let body = try XCTUnwrap(after.components(separatedBy: "\n    }\n").first)
        XCTAssertTrue(body.contains("resetBody()"), "startOver drops the body")
    }
}
