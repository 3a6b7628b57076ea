import Foundation

/// The text of a download's progress as people read it on a terminal or in a log: byte counts,
/// rates, times left, a wget-style line fitted to a terminal's width. Pure (no clock, no I/O): the
/// numbers come in as arguments, from a task's progress or ``DownloadQueue/Change``s, and a
/// ``RateMeter`` gives the rate. `courier get` draws its progress with it.
public enum ProgressFormat {
    private static let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// A byte count in binary units with one decimal: `0 B`, `1023 B`, `1.0 KiB`, `12.3 MiB`.
    public static func bytes(_ count: Int64) -> String {
        guard count >= 1024 else { return "\(max(count, 0)) B" }
        var value = Double(count) / 1024
        var index = 0
        // 1023.96 KiB would print as "1024.0 KiB": move up a unit before rounding gets there.
        while value >= 1023.95, index < units.count - 1 {
            value /= 1024
            index += 1
        }
        return String(format: "%.1f", value) + " " + units[index]
    }

    /// A transfer rate: `512 B/s`, `85.3 MiB/s`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        return bytes(Int64(min(bytesPerSecond, 9e18).rounded())) + "/s"
    }

    /// A time left: `0:05`, `12:34`, `1:02:03`; `--:--` when unknown or beyond 99 hours.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 100 * 3600 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        let hours = total / 3600
        let minutes = total % 3600 / 60
        let rest = total % 60
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// Whole percent done, rounded down so that 100% means every byte is there; `nil` when
    /// the total is unknown.
    public static func percent(_ completed: Int64, of total: Int64?) -> Int? {
        guard let total, total >= 0 else { return nil }
        guard total > 0 else { return 100 }
        if completed >= total { return 100 }
        return max(0, min(99, Int((Double(completed) * 100 / Double(total)).rounded(.down))))
    }

    /// Seconds until `total` at `bytesPerSecond`, when both are known.
    public static func secondsLeft(_ completed: Int64, of total: Int64?, at bytesPerSecond: Double?) -> Double? {
        guard let total, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(total - completed, 0)) / bytesPerSecond
    }

    /// A time left on the terminal line, as wget shows it: `3s`, `1m 5s`, `2h 3m`, `4d 5h`; `nil`
    /// when unknown or beyond 99 days.
    public static func eta(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0, seconds < 100 * 86_400 else { return nil }
        let total = Int(seconds.rounded(.up))
        switch total {
        case ..<60: return "\(total)s"
        case ..<3600: return "\(total / 60)m \(total % 60)s"
        case ..<86_400: return "\(total / 3600)h \(total % 3600 / 60)m"
        default: return "\(total / 86_400)d \(total % 86_400 / 3600)h"
        }
    }

    /// The columns a terminal gives `text`: 2 for a character that is or may be wide (Hangul,
    /// CJK, fullwidth forms, emoji and symbols), 1 otherwise. Where in doubt it counts 2, so a
    /// line it measures never wraps.
    public static func columns(of text: some StringProtocol) -> Int {
        text.reduce(0) { sum, character in
            sum + (character.unicodeScalars.contains(where: isWide) ? 2 : 1)
        }
    }

    /// East Asian Wide and Fullwidth ranges (UAX #11), and the symbol and emoji blocks that
    /// terminals may draw two columns wide.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23FF, 0x2600...0x27BF, 0x2B00...0x2BFF,
            0x2E80...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F000...0x1FAFF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `text` cut to at most `width` columns with `…` in the middle, keeping its start and its end
    /// (where a file's extension is).
    public static func truncate(_ text: String, toColumns width: Int) -> String {
        guard columns(of: text) > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        let tailWidth = (width - 1) / 2
        let headWidth = width - 1 - tailWidth
        var head = "", tail = ""
        for character in text {
            guard columns(of: head) + columns(of: String(character)) <= headWidth else { break }
            head.append(character)
        }
        for character in text.reversed() {
            guard columns(of: tail) + columns(of: String(character)) <= tailWidth else { break }
            tail.insert(character, at: tail.startIndex)
        }
        return head + "…" + tail
    }

    /// A progress bar `[=====>    ]` with `inner` columns between the brackets.
    public static func bar(_ completed: Int64, of total: Int64, inner: Int) -> String {
        let fraction = total > 0 ? min(1, max(0, Double(completed) / Double(total))) : 1
        let filled = Int((fraction * Double(inner)).rounded(.down))
        let body: String
        if filled >= inner {
            body = String(repeating: "=", count: inner)
        } else if filled == 0 {
            body = String(repeating: " ", count: inner)
        } else {
            body = String(repeating: "=", count: filled - 1) + ">" + String(repeating: " ", count: inner - filled)
        }
        return "[" + body + "]"
    }

    /// The connection count on the terminal line, while a split download uses more than one:
    /// `4 conn` (`nil` for one). Plain words, not aria2's `CN:4`, so that curl and wget users
    /// read it too.
    public static func connectionsText(_ connections: Int) -> String? {
        connections > 1 ? "\(connections) conn" : nil
    }

    /// The line redrawn in place on a terminal `columns` wide, like wget's:
    /// `data.bin  45% [=========>           ]  12.3 MiB  4.1 MiB/s  eta 3s`, with a split
    /// download's connection count after the rate while it uses more than one
    /// (`…  4.1 MiB/s   4 conn  eta 3s`). It never reaches the last column (some terminals wrap
    /// there), so it never wraps. When narrow it sheds, in order: the bar, the name, the
    /// connection count, the ETA, the rate. Without a known total there is no percentage or bar; rate and
    /// ETA appear once a rate has been measured.
    public static func terminalLine(
        name: String?, completed: Int64, total: Int64?, bytesPerSecond: Double?, connections: Int = 1, columns width: Int
    ) -> String {
        let limit = max(width - 1, 1)
        let percentText = percent(completed, of: total).map { "\($0)%" }
        let size = bytes(completed)
        let rateText = bytesPerSecond.map(rate)
        let etaText = secondsLeft(completed, of: total, at: bytesPerSecond).flatMap(eta).map { "eta " + $0 }
        let name = name.map(displayable).flatMap { $0.isEmpty ? nil : $0 }
        let connectionsText = connectionsText(connections)

        // With a bar: fixed-width fields, so that the bar keeps its size as the numbers change.
        if let total, let percentText {
            // `64 conn` at most: 7 columns, so the bar changes size only when the count appears or goes.
            let connectionsField = connectionsText.map { "  " + pad($0, 7) } ?? ""
            let padded =
                pad(size, 9) + "  " + pad(rateText ?? "", 11) + connectionsField + "  "
                + (etaText ?? "").paddedRight(10)
            let lead = name.map { truncate($0, toColumns: max(10, limit / 4)) + "  " } ?? ""
            let inner = limit - columns(of: lead) - 4 - 1 - 2 - 1 - columns(of: padded)
            if inner >= 10 {
                let line = lead + pad(percentText, 4) + " " + bar(completed, of: total, inner: inner) + " " + padded
                return trimmingTrailingSpaces(line)
            }
        }
        // No bar: the name while it fits (shortened down to 8 columns), then the numbers alone,
        // shedding the connection count, the ETA and then the rate.
        let candidates: [[String?]] = [
            [percentText, size, rateText, connectionsText, etaText], [percentText, size, rateText, etaText],
            [percentText, size, rateText], [percentText, size], [size],
        ]
        for (index, fields) in candidates.enumerated() {
            let stats = fields.compactMap { $0 }.joined(separator: "  ")
            let statsWidth = columns(of: stats)
            if index == 0, let name {
                let room = limit - statsWidth - 2
                if columns(of: name) <= room || room >= 8 { return truncate(name, toColumns: room) + "  " + stats }
            }
            if statsWidth <= limit { return stats }
        }
        return truncate(size, toColumns: limit)
    }

    /// `text` right-aligned in `width` columns.
    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - columns(of: text))) + text
    }

    private static func trimmingTrailingSpaces(_ text: String) -> String {
        var text = text
        while text.last == " " { text.removeLast() }
        return text
    }

    /// A name as it may be shown on a terminal: control characters (an `-o` name may hold any)
    /// become `?`.
    public static func displayable(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.map {
                    $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
                }))
    }

    /// A progress line for a log (stderr not a terminal):
    /// `12.0 MiB of 64.0 MiB (18%) 85.3 MiB/s, ETA 0:01`, or `12.0 MiB 85.3 MiB/s` without a total.
    public static func logLine(completed: Int64, total: Int64?, bytesPerSecond: Double?) -> String {
        var text = ""
        if let total, let percent = percent(completed, of: total) {
            text += "\(bytes(completed)) of \(bytes(total)) (\(percent)%)"
        } else {
            text += bytes(completed)
        }
        if let bytesPerSecond {
            text += " " + rate(bytesPerSecond)
            if let left = secondsLeft(completed, of: total, at: bytesPerSecond) { text += ", ETA \(duration(left))" }
        }
        return text
    }
}

extension String {
    /// The string followed by spaces up to `length` characters.
    fileprivate func paddedRight(_ length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
