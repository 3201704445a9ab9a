public import Foundation

/// The functions value expressions can call: the built-in library, plus any a program registers.
///
/// Built in (names are what a mapping file writes):
///
/// | function | result |
/// |---|---|
/// | `lowercase(s)`, `uppercase(s)`, `trim(s)` | the string changed |
/// | `substring(s, start[, length])` | characters from `start` (0-based), at most `length` of them |
/// | `replace(s, find, with)` | every occurrence replaced |
/// | `split(s, separator, index)` | the `index`-th (0-based) piece, nil when there is none |
/// | `join(separator, a, b, …)` | the non-nil arguments as text, joined |
/// | `length(s)` | the number of characters |
/// | `string(x)`, `integer(x)`, `double(x)` | the value converted |
/// | `round(x[, digits])`, `floor(x)`, `ceil(x)`, `abs(x)` | numbers |
/// | `now()` | the time the run started (one value for the whole run) |
/// | `parse(s[, format])` | a date from ISO 8601 text, or from `format` (`yyyy-MM-dd`, UTC) |
/// | `format(date[, format])` | the date as ISO 8601 text, or in `format` (UTC) |
/// | `add(date, amount[, unit])` | the date moved by `amount` `seconds` (default), `minutes`, `hours` or `days` |
/// | `uuid()` | a new random UUID |
/// | `if(condition, then, else)` | `then` when the condition is true, else `else` |
/// | `unarchived(x)` | the value the keyed archive of a Transformable (or Binary) value holds |
/// | `archived(x)` | `x` as `NSKeyedArchiver` archives it, for a Transformable attribute |
/// | `call(class, selector, a, …)` | app code a program registered (``registerMethod(_:selector:_:)``) |
///
/// For relationships (they give objects, not values): `mapped(mappingName, $source.keyPath)` (the objects the key
/// path reaches, as the named entity mapping made them: Core Data's
/// `destinationInstancesForEntityMappingNamed:sourceInstances:`) and `mappedThrough(relationship, $source.keyPath)`
/// (as whichever mapping made each: `destinationInstancesForSourceRelationshipNamed:sourceInstances:`);
/// `fetch('Entity', 'predicate')` gives the source objects of an entity a predicate holds for (Core Data's `FETCH`),
/// and `fetchCount('Entity', 'predicate')` their number, as a value.
///
/// Arguments that are nil make string and number functions return nil (so `??` can supply a default).
/// ```swift
/// var functions = ValueExpressionFunctions()
/// functions.register("initials") { arguments in .string(String(arguments.first?.text?.prefix(2) ?? "")) }
/// ```
public struct ValueExpressionFunctions: Sendable {
    /// A function body: the evaluated arguments in, one value out.
    public typealias Body = @Sendable ([Value]) throws -> Value

    private var custom: [String: Body] = [:]
    /// Entity migration policies by class name.
    private(set) var policies: [String: any EntityMigrationPolicy] = [:]
    /// The value `now()` returns for the whole run.
    public var now: Date
    /// The values `$param.name` reads (`decant migrate … --param bundleID=com.example.app`): what a policy takes from
    /// the app's environment, given to the run.
    public var parameters: [String: String] = [:]
    /// The reader of keyed archives that key paths into Transformable values (`$source.dictionaryData.title`),
    /// `unarchived(…)` and `archived(…)` use; the `Decant` module installs Foundation's for every migration.
    public var archivedValues: (any ArchivedValueCoding)?
    /// Where values read as nil from archives holding classes outside Foundation's plain ones are noted (one per
    /// compiled hop).
    package var archiveReads: ArchiveReads?

    /// The built-in library; `now` fixed at `now` (the current time by default).
    public init(now: Date = Date()) {
        self.now = now
    }

    /// Registers (or replaces) a function.
    public mutating func register(_ name: String, _ body: @escaping Body) {
        custom[name] = body
    }

    /// Registers app code under a class name and selector, as a mapping model calls it: `call('Helpers',
    /// 'normalizedPlate:', $source.numberPlate)`, Xcode's `FUNCTION(CAST("Helpers", "Class"), "normalizedPlate:", …)`;
    /// and, for an entity mapping whose policy is `className`, `FUNCTION($entityPolicy, "selector", …)`.
    ///
    /// A class name matches with or without its module prefix (`MyApp.Helpers` and `Helpers`).
    public mutating func registerMethod(_ className: String, selector: String, _ body: @escaping Body) {
        custom[Self.methodKey(className, selector)] = body
    }

    /// Registers an entity migration policy under the class name a mapping model names (module prefix optional).
    public mutating func registerPolicy(_ policy: any EntityMigrationPolicy, as className: String) {
        policies[Self.unqualified(className)] = policy
    }

    /// The policy registered for `className`, if any.
    public func policy(named className: String) -> (any EntityMigrationPolicy)? {
        policies[Self.unqualified(className)]
    }

    /// Whether `call(className, selector)` is registered.
    public func knowsMethod(_ className: String, selector: String) -> Bool {
        custom[Self.methodKey(className, selector)] != nil
    }

    private static func unqualified(_ className: String) -> String {
        className.split(separator: ".").last.map(String.init) ?? className
    }

    private static func methodKey(_ className: String, _ selector: String) -> String {
        "\(unqualified(className)) \(selector)"
    }

    /// The names of the built-in functions.
    public static let builtInNames: Set<String> = [
        "lowercase", "uppercase", "trim", "substring", "replace", "split", "join", "length", "string", "integer",
        "double", "round", "floor", "ceil", "abs", "now", "parse", "format", "add", "uuid", "if", "call", "mapped",
        "mappedThrough", "fetch", "fetchCount", "div", "sqrt", "pow", "exp", "ln", "log", "sin", "cos", "tan", "asin",
        "acos", "atan", "atan2", "param", "unarchived", "archived",
    ]

    /// Whether `name` is a function this library can call.
    public func knows(_ name: String) -> Bool { custom[name] != nil || Self.builtInNames.contains(name) }

    /// ISO 8601 with fractional seconds, UTC.
    static var isoFormatter: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    /// Calls `name` with evaluated arguments.
    /// - Throws: `.malformedInput` for an unknown function, a wrong argument count or an argument of the wrong kind.
    public func call(_ name: String, _ arguments: [Value]) throws -> Value {
        if let body = custom[name] { return try body(arguments) }
        switch name {
        case "mapped", "mappedThrough", "fetch":
            throw DecantError(.malformedInput, "\(name)(…) gives objects: use it for a relationship, not an attribute")
        case "fetchCount":
            throw DecantError(
                .malformedInput, "fetchCount('Entity', 'predicate') needs literal texts (it is counted before the hop runs)")
        case "call":
            guard arguments.count >= 2, let className = arguments[0].text, let selector = arguments[1].text else {
                throw DecantError(.malformedInput, "call(class, selector, …) needs a class name and a selector")
            }
            guard let body = custom[Self.methodKey(className, selector)] else {
                if let policy = policy(named: className) {
                    return try policy.perform(selector, arguments: Array(arguments.dropFirst(2)))
                }
                throw DecantError(
                    .planNotExecutable,
                    "\(className) \(selector) is app code; register it with ValueExpressionFunctions.registerMethod"
                )
            }
            return try body(Array(arguments.dropFirst(2)))
        default: break
        }
        func argument(_ index: Int) -> Value { index < arguments.count ? arguments[index] : .null }
        func expectCount(_ range: ClosedRange<Int>) throws {
            guard range.contains(arguments.count) else {
                let count =
                    range.lowerBound == range.upperBound
                    ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
                throw DecantError(.malformedInput, "\(name)() takes \(count) arguments, not \(arguments.count)")
            }
        }
        func integerArgument(_ index: Int) throws -> Int {
            guard let number = argument(index).number, number.rounded() == number, abs(number) < 1e15 else {
                throw DecantError(.malformedInput, "\(name)(): argument \(index + 1) must be a whole number")
            }
            return Int(number)
        }
        switch name {
        case "lowercase", "uppercase", "trim", "length":
            try expectCount(1...1)
            guard let text = argument(0).text else { return .null }
            switch name {
            case "lowercase": return .string(text.lowercased())
            case "uppercase": return .string(text.uppercased())
            case "trim": return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
            default: return .integer(Int64(text.count))
            }
        case "substring":
            try expectCount(2...3)
            guard let text = argument(0).text else { return .null }
            let start = max(0, try integerArgument(1))
            let characters = Array(text)
            guard start < characters.count else { return .string("") }
            let length = arguments.count == 3 ? max(0, try integerArgument(2)) : characters.count
            return .string(String(characters[start..<min(characters.count, start + length)]))
        case "replace":
            try expectCount(3...3)
            guard let text = argument(0).text, let find = argument(1).text, !find.isEmpty else { return argument(0) }
            return .string(text.replacingOccurrences(of: find, with: argument(2).text ?? ""))
        case "split":
            try expectCount(3...3)
            guard let text = argument(0).text, let separator = argument(1).text, !separator.isEmpty else {
                return .null
            }
            let pieces = text.components(separatedBy: separator)
            let index = try integerArgument(2)
            return pieces.indices.contains(index) ? .string(pieces[index]) : .null
        case "join":
            try expectCount(1...64)
            let separator = argument(0).text ?? ""
            return .string(arguments.dropFirst().compactMap(\.text).joined(separator: separator))
        case "string":
            try expectCount(1...1)
            return argument(0).text.map(Value.string) ?? .null
        case "integer":
            try expectCount(1...1)
            guard let number = argument(0).number else { return .null }
            return .integer(try ValueOverflow.integer(number.rounded(.towardZero), "integer(\(number))"))
        case "param":
            try expectCount(1...1)
            guard let key = argument(0).text else { throw DecantError(.malformedInput, "param() takes a name") }
            guard let value = parameters[key] else {
                throw DecantError(.usage, "the mapping reads $param.\(key), and no --param \(key)=VALUE was given")
            }
            return .string(value)
        case "div":
            // Integer division, truncated toward zero as Swift and C divide integers (`/` gives a fraction).
            try expectCount(2...2)
            guard case .integer(let a) = argument(0), case .integer(let b) = argument(1) else {
                if argument(0) == .null || argument(1) == .null { return .null }
                throw DecantError(.malformedInput, "div() divides whole numbers, not \(argument(0)) and \(argument(1))")
            }
            guard b != 0 else { throw DecantError(.malformedInput, "division by zero") }
            guard b != -1 || a != .min else { throw ValueOverflow.error("div(\(a), \(b))") }
            return .integer(a / b)
        case "sqrt", "exp", "ln", "log", "sin", "cos", "tan", "asin", "acos", "atan":
            try expectCount(1...1)
            guard let x = argument(0).number else { return .null }
            let result: Double
            switch name {
            case "sqrt": result = x.squareRoot()
            case "exp": result = Foundation.exp(x)
            case "ln": result = Foundation.log(x)
            case "log": result = Foundation.log10(x)
            case "sin": result = Foundation.sin(x)
            case "cos": result = Foundation.cos(x)
            case "tan": result = Foundation.tan(x)
            case "asin": result = Foundation.asin(x)
            case "acos": result = Foundation.acos(x)
            default: result = Foundation.atan(x)
            }
            return .double(result)
        case "pow", "atan2":
            try expectCount(2...2)
            guard let x = argument(0).number, let y = argument(1).number else { return .null }
            return .double(name == "pow" ? Foundation.pow(x, y) : Foundation.atan2(x, y))
        case "double":
            try expectCount(1...1)
            return argument(0).number.map(Value.double) ?? .null
        case "round":
            try expectCount(1...2)
            guard let number = argument(0).number else { return .null }
            let digits = arguments.count == 2 ? try integerArgument(1) : 0
            if digits == 0 { return .integer(try ValueOverflow.integer(number.rounded(), "round(\(number))")) }
            // Past ±308 digits the scale is infinite or zero: the number is kept, or rounds to zero.
            guard digits < 308 else { return .double(number) }
            guard digits > -308 else { return .double(0) }
            let scale = pow(10.0, Double(digits))
            let scaled = (number * scale).rounded() / scale
            return .double(scaled.isFinite ? scaled : number)
        case "floor", "ceil", "abs":
            try expectCount(1...1)
            if case .integer(let integer) = argument(0) {
                guard name != "abs" else {
                    guard integer != .min else { throw ValueOverflow.error("abs(\(integer))") }
                    return .integer(Swift.abs(integer))
                }
                return .integer(integer)
            }
            guard let number = argument(0).number else { return .null }
            switch name {
            case "floor": return .integer(try ValueOverflow.integer(number.rounded(.down), "floor(\(number))"))
            case "ceil": return .integer(try ValueOverflow.integer(number.rounded(.up), "ceil(\(number))"))
            default: return .double(Swift.abs(number))
            }
        case "now":
            try expectCount(0...0)
            return .date(now)
        case "uuid":
            try expectCount(0...0)
            return .uuid(UUID())
        case "parse":
            try expectCount(1...2)
            if case .date = argument(0) { return argument(0) }
            guard let text = argument(0).text else { return .null }
            if arguments.count == 2, let format = argument(1).text {
                return Self.formatter(format).date(from: text).map(Value.date) ?? .null
            }
            if let date = Self.isoFormatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) {
                return .date(date)
            }
            return Self.formatter("yyyy-MM-dd").date(from: text).map(Value.date) ?? .null
        case "format":
            try expectCount(1...2)
            guard case .date(let date) = argument(0) else { return argument(0).isNull ? .null : argument(0) }
            if arguments.count == 2, let format = argument(1).text {
                return .string(Self.formatter(format).string(from: date))
            }
            return .string(Self.isoFormatter.string(from: date))
        case "add":
            try expectCount(2...3)
            guard case .date(let date) = argument(0), let amount = argument(1).number else { return .null }
            let unit = arguments.count == 3 ? argument(2).text ?? "seconds" : "seconds"
            let seconds: Double
            switch unit {
            case "seconds": seconds = 1
            case "minutes": seconds = 60
            case "hours": seconds = 3600
            case "days": seconds = 86400
            default:
                throw DecantError(.malformedInput, "add(): unknown unit '\(unit)' (seconds, minutes, hours, days)")
            }
            return .date(date.addingTimeInterval(amount * seconds))
        case "if":
            try expectCount(3...3)
            return argument(0).isTrue ? argument(1) : argument(2)
        case "unarchived":
            try expectCount(1...1)
            return try readArchive(argument(0), at: [], reading: "unarchived(…)")
        case "archived":
            try expectCount(1...1)
            switch argument(0) {
            case .null, .transformable: return argument(0)
            case let value:
                guard let archivedValues else {
                    throw DecantError(.internalError, "archived(…): no writer of keyed archives is installed")
                }
                do {
                    return .transformable(try archivedValues.archivedData(of: value))
                } catch {
                    throw DecantError(.malformedInput, "archived(…): \(error.reason)", underlyingError: error)
                }
            }
        default:
            throw DecantError(
                .malformedInput,
                "unknown function \(name)() (known: "
                    + Self.builtInNames.union(custom.keys).sorted().joined(separator: ", ") + ")"
            )
        }
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }
}

extension Value {
    /// The value as text (`nil` for ``Value/null``): numbers and booleans spelled out, dates in ISO 8601.
    public var text: String? {
        switch self {
        case .null: nil
        case .string(let text), .uri(let text), .externalDataReference(let text): text
        case .integer(let integer): String(integer)
        case .double(let real): real.rounded() == real && abs(real) < 1e15 ? String(Int64(real)) : String(real)
        case .decimal(let decimal): "\(decimal)"
        case .bool(let flag): flag ? "true" : "false"
        case .date(let date): ValueExpressionFunctions.isoFormatter.string(from: date)
        case .uuid(let uuid): uuid.uuidString
        case .data(let data), .transformable(let data): data.base64EncodedString()
        case .composite: ValueExpression.literalText(self)
        }
    }

    /// The value as a number, when it is one (booleans as 0 and 1, numeric text parsed; dates are not numbers).
    public var number: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .double(let real): real
        case .decimal(let decimal): NSDecimalNumber(decimal: decimal).doubleValue
        case .bool(let flag): flag ? 1 : 0
        case .string(let text): Double(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// Truth for conditions: `true`, a non-zero number, non-empty text; nil and everything else are false.
    public var isTrue: Bool {
        switch self {
        case .bool(let flag): flag
        case .integer(let integer): integer != 0
        case .double(let real): real != 0
        case .string(let text): !text.isEmpty
        default: false
        }
    }
}
