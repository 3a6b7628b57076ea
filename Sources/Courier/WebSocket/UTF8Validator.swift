/// Checks UTF-8 as it arrives, in chunks split anywhere (inside a character too), and says at
/// which byte it stops being UTF-8: what a text message needs to fail with 1007 at the first bad
/// byte (RFC 6455 §8.1) rather than when the message ends.
///
/// The rules are the Unicode Standard's table of well-formed byte sequences (Table 3-7), the
/// same set RFC 3629 allows: no overlong forms (`C0`, `C1`, `E0 80–9F`, `F0 80–8F`), no
/// surrogates (`ED A0–BF`), nothing above U+10FFFF (`F4 90–BF`, `F5–FF`). Written here rather
/// than asking Foundation or `String`, which validate whole buffers only and cannot say where a
/// sequence split across two chunks goes wrong.
struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes still needed by the character in progress.
    private var remaining: UInt8 = 0
    /// The range the next byte must fall in while a character is in progress (the first
    /// continuation is narrower after `E0`, `ED`, `F0` and `F4`; later ones are `80–BF`).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    /// Set once a bad byte was seen: nothing after it is valid.
    private var failed = false

    /// A validator at the start of a text.
    init() {}

    /// Whether everything seen so far is UTF-8 and ends on a character boundary: a text may
    /// end here.
    var isComplete: Bool { !failed && remaining == 0 }

    /// Takes the next chunk; returns the offset in `bytes` of the first byte that cannot
    /// continue UTF-8, or `nil` when all of them can (a character may still be open at the end:
    /// see ``isComplete``).
    mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !failed else { return 0 }
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        while index < count {
            if remaining == 0 {
                // ASCII runs eight bytes at a time: no byte has its high bit set.
                while index &+ 8 <= count,
                    (base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index &+= 8
                }
                guard index < count else { break }
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                guard byte >= 0x80 else {
                    index &+= 1
                    continue
                }
                let continuations: Int
                let first: ClosedRange<UInt8>
                switch byte {
                case 0xC2...0xDF: (continuations, first) = (1, 0x80...0xBF)
                case 0xE0: (continuations, first) = (2, 0xA0...0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (continuations, first) = (2, 0x80...0xBF)
                case 0xED: (continuations, first) = (2, 0x80...0x9F)
                case 0xF0: (continuations, first) = (3, 0x90...0xBF)
                case 0xF1...0xF3: (continuations, first) = (3, 0x80...0xBF)
                case 0xF4: (continuations, first) = (3, 0x80...0x8F)
                default:  // 80–C1 cannot start a character; F5–FF are never UTF-8.
                    failed = true
                    return index
                }
                guard index &+ continuations < count else {
                    // The character goes on in the next chunk: byte by byte from here.
                    remaining = UInt8(continuations)
                    lower = first.lowerBound
                    upper = first.upperBound
                    index &+= 1
                    continue
                }
                // The whole character is here: check it in one go.
                var next = index &+ 1
                var allowed = first
                while next <= index &+ continuations {
                    guard allowed.contains(base.load(fromByteOffset: next, as: UInt8.self)) else {
                        failed = true
                        return next
                    }
                    allowed = 0x80...0xBF
                    next &+= 1
                }
                index = next
                continue
            } else {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                guard byte >= lower, byte <= upper else {
                    failed = true
                    return index
                }
                remaining &-= 1
                lower = 0x80
                upper = 0xBF
            }
            index &+= 1
        }
        return nil
    }

    /// Whether `bytes` is UTF-8 as a whole (a close reason).
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) == nil && validator.isComplete
    }
}
