import Foundation

/// An attribute's default value, parsed once from the model's text when the text or the type is set, so that
/// migration inference, the compiled-model encoder and every reader see the same value.
///
/// The rules are those of Xcode's model compiler reading `defaultValueString` (`coredata-formats.md` section 1):
///
/// | type | text | value |
/// |---|---|---|
/// | Integer 16/32/64 | any text | NSString's `integerValue` (section 1.9): white space, a sign, then the digits as far as they go (`12`, `-3`; `7.9` and `1e30` give `7` and `1`); no digits give 0 (`YES`, `NO`, `abc`); past 64 bits the nearest bound |
/// | Boolean | any text | NSString's `boolValue`: `YES`, `True`, `t`, `1`, `+01` are true; `NO`, `false`, `0`, `maybe` false |
/// | Double, Float | `2.5`, `-1e-3`, `inf`, `nan` | the number; anything else a ``Problem`` |
/// | Decimal | a number in ``NumberText``'s grammar (`4.5`, `-1e3`, `.5`) | the exact decimal; anything else a ``Problem`` |
/// | Date | seconds since 2001-01-01 (`defaultDateTimeInterval`), or `2013-04-23 12:00:00 +0000` | the date; anything else a ``Problem`` |
/// | UUID | canonical form | the UUID; anything else a ``Problem`` |
/// | String, URI | any text | the text as it is |
/// | Binary, Transformable, others | — | none: a model source cannot state one |
///
/// Leading and trailing white space around a number is skipped, as Foundation's number parsing does.
///
/// ```swift
/// var flag = Attribute(name: "pinned", type: .boolean)
/// flag.defaultValue = "True"
/// flag.defaultLiteral          // .bool(true)
/// flag.defaultProblem          // nil
/// ```
public enum AttributeDefault: Sendable, Hashable {
    /// No default.
    case none
    /// The default as a value of the attribute's type.
    case value(Value)
    /// The text cannot be a value of the attribute's type.
    case invalid(Problem)

    /// Why a default's text is not a value of its attribute's type.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The text as the model states it.
        public var text: String
        /// The attribute type it should be a value of.
        public var type: AttributeType
        /// What the text would need to be.
        public var expected: String

        public var description: String {
            "the default value \"\(text)\" of this \(type.modelName) attribute is not \(expected)"
        }
    }

    /// Parses `text` for an attribute of `type`.
    public init(parsing text: String?, as type: AttributeType) {
        guard let text else {
            self = .none
            return
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        func invalid(_ expected: String) -> AttributeDefault {
            .invalid(Problem(text: text, type: type, expected: expected))
        }
        switch type {
        case .integer16, .integer32, .integer64:
            // Xcode's model compiler reads the text as NSString's integerValue does: `"NO"` and `"YES"` on an
            // Integer 32 attribute compile to 0 (section 1.9), so no text is ever a problem here.
            self = .value(.integer(Self.integerValue(of: text)))
        case .boolean:
            self = .value(.bool(UserInfoValue.string(text).boolValue ?? false))
        case .double, .float:
            if NumberText.isDecimalLiteral(trimmed) || Self.nonFinite.contains(trimmed.lowercased()),
                let real = Double(trimmed)
            {
                self = .value(.double(real))
            } else {
                self = invalid("a number")
            }
        case .decimal:
            if NumberText.isDecimalLiteral(trimmed), let decimal = Decimal(string: trimmed, locale: nil),
                !decimal.isNaN
            {
                self = .value(.decimal(decimal))
            } else {
                self = invalid("a decimal number")
            }
        case .date:
            if NumberText.isDecimalLiteral(trimmed), let seconds = Double(trimmed), seconds.isFinite {
                self = .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            } else if let date = Self.describedDate(trimmed) {
                self = .value(.date(date))
            } else {
                self = invalid("seconds since 2001-01-01 or a date as 2013-04-23 12:00:00 +0000")
            }
        case .uuid:
            if let uuid = UUID(uuidString: trimmed) {
                self = .value(.uuid(uuid))
            } else {
                self = invalid("a UUID")
            }
        case .uri: self = .value(.uri(text))
        case .string: self = .value(.string(text))
        default: self = .none
        }
    }

    /// NSString's `integerValue` (64-bit `NSInteger`): leading white space, one optional sign, then decimal digits
    /// as far as they go; no digits give 0, and a value past 64 bits the nearest bound, as `strtoll` does.
    static func integerValue(of text: String) -> Int64 {
        var bytes = Substring(text).utf8.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var magnitude: UInt64 = 0
        var saturated = false
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { break }
            let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflowTimes || overflowSum {
                saturated = true
                break
            }
            magnitude = sum
        }
        if negative {
            return saturated || magnitude > UInt64(Int64.max) + 1 ? .min : Int64(bitPattern: 0 &- magnitude)
        }
        return saturated || magnitude > UInt64(Int64.max) ? .max : Int64(magnitude)
    }

    /// The spellings of a double that is not finite, which Swift, C and Foundation read alike.
    private static let nonFinite: Set<String> = ["inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan"]

    /// A date in NSDate's description form (`2013-04-23 12:00:00 +0000`), which Xcode writes as a date's
    /// `defaultValueString` next to the `defaultDateTimeInterval` number.
    private static func describedDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.date(from: text)
    }

    /// The value, when there is one.
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The problem, when the text is not a value of its type.
    public var problem: Problem? {
        if case .invalid(let problem) = self { return problem }
        return nil
    }
}

/// The parsed default an ``Attribute`` carries next to its text. It is derived from the text and the type, which
/// the attribute's equality and hash already cover, so it takes no part in either (a `nan` default would
/// otherwise make an attribute unequal to itself).
struct ParsedDefault: Sendable, Hashable {
    var parsed: AttributeDefault

    static func == (lhs: ParsedDefault, rhs: ParsedDefault) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

extension Attribute {
    /// The model's default value as a ``Value`` of the attribute's type (nil when there is none, or when the text
    /// is not a value of the type: see ``defaultProblem``). Parsed once, when the text or the type is set, by the
    /// rules of ``AttributeDefault``.
    ///
    /// ```swift
    /// Attribute(name: "count", type: .integer16).defaultLiteral   // nil; with defaultValue "0": .integer(0)
    /// ```
    public var defaultLiteral: Value? { parsedDefault.parsed.value }

    /// The parsed default: none, a value, or why the text is not a value of the type.
    public var parsedDefaultValue: AttributeDefault { parsedDefault.parsed }

    /// Why the default's text is not a value of the attribute's type, or nil when it is (or there is none).
    public var defaultProblem: AttributeDefault.Problem? { parsedDefault.parsed.problem }
}
