/// Bytes one connection (or the whole download) moved in a measured span of time, as the
/// download observed it: the scheduler reads no clock.
struct Throughput: Sendable, Equatable {
    var bytes: Int64
    var seconds: Double

    /// Bytes per second, or `nil` before anything was measured.
    var bytesPerSecond: Double? {
        guard seconds > 0, bytes >= 0 else { return nil }
        return Double(bytes) / seconds
    }
}
