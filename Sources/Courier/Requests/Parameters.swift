import Foundation

/// Parameters as AFNetworking/Alamofire take them: values may be String, any integer or floating
/// type, Bool, Date, NSNull, arrays of values, and nested [String: any Sendable] dictionaries.
///
/// ``URLEncodedFormSerializer`` also accepts `NSNumber`, `Decimal` and optionals (`nil` is
/// written like `NSNull`); ``JSONRequestSerializer`` accepts what `JSONSerialization` can write.
public typealias Parameters = [String: any Sendable]
