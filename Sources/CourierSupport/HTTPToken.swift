/// RFC 9110 §5.6.2 tokens: the one definition of `tchar` for the library (methods, header and
/// parameter names, multipart boundaries) and the test server's request parser.
///
/// `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA`
package enum HTTPToken {
    /// Whether `byte` is a `tchar`.
    @inlinable
    package static func isCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether `scalar` is a `tchar` (never a non-ASCII scalar).
    @inlinable
    package static func isCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && isCharacter(UInt8(scalar.value))
    }

    /// Whether `text` is a token: one or more `tchar`s.
    @inlinable
    package static func isToken(_ text: String) -> Bool {
        // Over the contiguous bytes when the string has them (a native string does): every
        // header name of every request is checked, and the generic `UTF8View` walk costs more.
        if let result = text.utf8.withContiguousStorageIfAvailable({ !$0.isEmpty && $0.allSatisfy(isCharacter) }) {
            return result
        }
        return !text.isEmpty && text.utf8.allSatisfy(isCharacter)
    }
}
