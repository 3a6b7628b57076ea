/// Facts about the Courier library itself.
///
/// Not named `Courier`: a type with the module's name would shadow the module, so that
/// `Courier.HTTPClient` (needed when another imported module also has an `HTTPClient`) would look
/// for a member of the type and fail to compile (Docs/HTTPClient.md, "Name clashes").
public enum CourierInfo {
    /// The library version, sent in the default `User-Agent`.
    public static let version = "0.1.0"
}
