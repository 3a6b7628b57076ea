/// Facts about the Courier library itself.
///
/// Not named `Courier`: a type with the module's name would shadow the module, so that
/// `Courier.HTTPClient` (needed when another imported module also has an `HTTPClient`) would look
/// for a member of the type and fail to compile (Docs/HTTPClient.md, "Name clashes").
public enum CourierInfo {
    /// The library version, sent in the default `User-Agent`.
    public static let version = "0.1.0"
}

/// The library version, for code in this package that still spells it `Courier.version` (the
/// `courier` command line, until it switches to ``CourierInfo/version``); a module-qualified
/// name finds this top-level declaration now that no type is called `Courier`. Not public.
package var version: String { CourierInfo.version }
