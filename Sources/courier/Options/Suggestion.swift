/// "Did you mean": the known word closest to a mistyped one.
enum Suggestion {
    /// The candidate `word` most likely meant, or `nil` when none is close. A candidate that
    /// `word` begins (`--out` → `--output`) or that begins `word` (`--output-document` →
    /// `--output`) comes first; otherwise the one at the smallest edit distance, if that is at
    /// most 60% of the word's length (3 at most): `--retry` → `--retries`, `--quite` → `--quiet`.
    /// Leading dashes are ignored in the comparison; ties go to the earlier candidate.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let bare = word.drop { $0 == "-" }
        guard bare.count >= 2 else { return nil }
        let stripped = candidates.map { (candidate: $0, bare: $0.drop { $0 == "-" }) }
        let prefixed = stripped.filter {
            ($0.bare.hasPrefix(bare) && bare.count >= 3) || (bare.hasPrefix($0.bare) && $0.bare.count >= 3)
        }
        if let best = prefixed.min(by: { distance(bare, $0.bare) < distance(bare, $1.bare) }) { return best.candidate }
        let limit = min(3, max(1, bare.count * 6 / 10))
        let scored = stripped.map { (candidate: $0.candidate, distance: distance(bare, $0.bare)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= limit else { return nil }
        return best.candidate
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// two neighbours (`quite` → `quiet` is 1) each count 1.
    static func distance<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { best = min(best, table[i - 2][j - 2] + 1) }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
