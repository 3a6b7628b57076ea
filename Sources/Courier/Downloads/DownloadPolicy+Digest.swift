extension DownloadPolicy {
    /// The 32 bytes of a SHA-256 written as exactly 64 hexadecimal digits (either case, no
    /// prefix or whitespace), for ``expectedSHA256``; `nil` for anything else.
    ///
    /// ```swift
    /// policy.expectedSHA256 = DownloadPolicy.sha256(hex: "0e4732…64ce")
    /// ```
    public static func sha256(hex: String) -> [UInt8]? {
        SHA256.parseHex(hex)
    }
}
