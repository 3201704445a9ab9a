public import Foundation

/// One value of a model's, entity's or property's `userInfo`: any property-list value. An `.xcdatamodel` writes only
/// strings; a compiled model (`.mom`, a store's `Z_MODELCACHE`) holds whatever the app's model set — numbers,
/// Booleans, dates, data, arrays and dictionaries too — and Decant keeps each as it is, to write it back unchanged.
///
/// ```swift
/// entity.userInfo["maxCount"] = .integer(12)
/// entity.userInfo["note"] = "kept"           // a string literal is a .string
/// ```
public indirect enum UserInfoValue: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([UserInfoValue])
    case dictionary([String: UserInfoValue])

    public init(stringLiteral value: String) { self = .string(value) }

    /// The value when it is a string.
    public var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// What Foundation's `boolValue` answers: a Boolean, a non-zero number, or a string starting with `Y`, `y`,
    /// `T`, `t` or a digit 1–9; nil for dates, data and collections.
    public var boolValue: Bool? {
        switch self {
        case .bool(let flag): return flag
        case .integer(let integer): return integer != 0
        case .real(let real): return real != 0
        case .string(let text):
            // As NSString's boolValue: leading white space, then one optional sign, then zeros are skipped.
            var rest = text.drop { $0.isWhitespace }
            if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
            guard let first = rest.drop(while: { $0 == "0" }).first else { return false }
            return "YyTt123456789".contains(first)
        default: return nil
        }
    }

    /// A property-list-like rendering: strings as they are, collections in parentheses and braces.
    public var description: String {
        switch self {
        case .string(let text): return text
        case .integer(let integer): return String(integer)
        case .real(let real): return String(real)
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date(let date): return date.description
        case .data(let data): return "<\(data.map { String(format: "%02x", $0) }.joined())>"
        case .array(let items): return "(" + items.map(\.description).joined(separator: ", ") + ")"
        case .dictionary(let entries):
            return "{" + entries.keys.sorted().map { "\($0) = \(entries[$0]?.description ?? "")" }
                .joined(separator: "; ") + "}"
        }
    }
}
