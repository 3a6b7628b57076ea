import Foundation

/// One parameter value, classified once so that encoders need not probe `Any` again.
///
/// The classification is where Linux differs from Darwin: `Bool`, the integer types and
/// `NSNumber` are distinct Swift types, yet `as?` casts bridge between them (an `Int` in an `Any`
/// casts to `NSNumber`, an `NSNumber` holding 1 casts to `Bool`). So types are told apart by
/// identity first, and casts are only used where no bridge can mislead.
enum ParameterValue {
    /// A string, or a number already in its textual form.
    case text(String)
    case bool(Bool)
    case date(Date)
    /// `NSNull` or `nil`.
    case null
    indirect case array([ParameterValue])
    /// Members sorted by key, so every encoding is deterministic.
    indirect case dictionary([(key: String, value: ParameterValue)])

    /// Classifies a top-level dictionary of parameters.
    static func dictionary(_ parameters: [String: Any]) throws -> ParameterValue {
        try ParameterValue(parameters, path: "")
    }

    /// Classifies `value`, which sits at `path` (`user[tags][0]`) for error messages.
    init(_ value: Any, path: String) throws {
        if let optional = value as? any OptionalParameter {
            guard let wrapped = optional.wrappedParameter else {
                self = .null
                return
            }
            self = try ParameterValue(wrapped, path: path)
            return
        }
        if value is NSNull {
            self = .null
        } else if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            // Checked by metatype, not by cast: `value as? NSNumber` also succeeds for Swift
            // numbers and Bools. JSONSerialization's booleans are NSNumbers of ObjC type "c".
            self = Self.isBoolean(number) ? .bool(number.boolValue) : .text(number.description)
        } else if let bool = value as? Bool, type(of: value) == Bool.self {
            self = .bool(bool)
        } else if let integer = value as? any BinaryInteger {
            self = .text(String(describing: integer))
        } else if let float = value as? any BinaryFloatingPoint {
            self = .text(String(describing: float))
        } else if let decimal = value as? Decimal {
            self = .text(decimal.description)
        } else if let string = value as? String {
            self = .text(string)
        } else if let substring = value as? Substring {
            self = .text(String(substring))
        } else if let date = value as? Date {
            self = .date(date)
        } else if let dictionary = value as? [String: Any] {
            self = .dictionary(
                try dictionary.sorted { $0.key < $1.key }.map { key, member in
                    (key, try ParameterValue(member, path: path.isEmpty ? key : "\(path)[\(key)]"))
                })
        } else if let array = value as? [Any] {
            self = .array(try array.enumerated().map { try ParameterValue($1, path: "\(path)[\($0)]") })
        } else {
            throw CourierError(
                code: .invalidRequest,
                message:
                    "the parameter \"\(path)\" has a value of type \(type(of: value)), which cannot be encoded; use a string, number, Bool, Date, NSNull, array or [String: any Sendable]"
            )
        }
    }

    /// Whether `number` wraps a boolean rather than an integer: Foundation on Linux gives
    /// booleans (and only booleans; `Int8` is "i") the ObjC type encoding "c".
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}

/// Lets a value inside `Any` be recognised as an `Optional` and unwrapped.
protocol OptionalParameter {
    /// The wrapped value, or `nil`.
    var wrappedParameter: Any? { get }
}

extension Optional: OptionalParameter {
    var wrappedParameter: Any? { self.map { $0 as Any } }
}
