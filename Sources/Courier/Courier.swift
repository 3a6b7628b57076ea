/// Courier: a session/task manager on Foundation's `URLSession`, built for Linux first.
public enum Courier {
    /// The library version, sent in the default `User-Agent`.
    public static let version = "0.1.0"
}
