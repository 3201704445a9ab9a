import Foundation

/// A value expression of a mapping: how one destination property gets its value from the source object.
///
/// The language is small and printable: `$source.keyPath`, literals (`12`, `1.5`, `'text'`, `true`, `nil`),
/// arithmetic (`+ - * / %`), comparison (`== != < <= > >=`), `&&`, `||`, `!`, `??` (the left value unless it is
/// nil) and calls of the function library (``ValueExpressionFunctions``). ``description`` prints an expression
/// back in the same syntax, so an inferred mapping can be written to a file and read again.
///
/// ```swift
/// let title = try ValueExpression(parsing: "uppercase(substring($source.content, 0, 40))")
/// print(title)   // uppercase(substring($source.content, 0, 40))
/// ```
public indirect enum ValueExpression: Sendable, Hashable, CustomStringConvertible {
    /// A constant.
    case literal(Value)
    /// `$source` (empty key path: the source object itself) or `$source.a.b`.
    case source(keyPath: [String])
    /// `-x` or `!x`.
    case unary(UnaryOperator, ValueExpression)
    /// `a + b`, `a == b`, `a ?? b`, …
    case binary(BinaryOperator, ValueExpression, ValueExpression)
    /// `name(arguments…)`.
    case call(String, [ValueExpression])

    /// A prefix operator.
    public enum UnaryOperator: String, Sendable, Hashable {
        case negate = "-"
        case not = "!"
    }

    /// An infix operator, with its precedence (higher binds tighter).
    public enum BinaryOperator: String, Sendable, Hashable, CaseIterable {
        case coalesce = "??"
        case or = "||"
        case and = "&&"
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
        case remainder = "%"

        /// Binding strength: `??` loosest, then `||`, `&&`, comparisons, `+ -`, `* / %`.
        public var precedence: Int {
            switch self {
            case .coalesce: 1
            case .or: 2
            case .and: 3
            case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: 4
            case .add, .subtract: 5
            case .multiply, .divide, .remainder: 6
            }
        }

        /// `??` groups to the right (`a ?? b ?? c` is `a ?? (b ?? c)`); the others to the left.
        public var isRightAssociative: Bool { self == .coalesce }
    }

    /// The expression `$source.<name>`: what inference writes for a property kept or renamed.
    public static func sourceProperty(_ name: String) -> ValueExpression { .source(keyPath: [name]) }

    /// The key-path step `[index]` (`$source.emails[0]`): the element at `index` of an archived array.
    public static func indexStep(_ index: Int) -> String { "[\(index)]" }

    /// The index of a key-path step written `[index]`, nil for any other step.
    public static func index(ofStep step: String) -> Int? {
        guard step.hasPrefix("["), step.hasSuffix("]") else { return nil }
        return Int(step.dropFirst().dropLast())
    }

    /// `$source.<path>` as written: steps joined by `.`, indexes (`[0]`) without one.
    public static func sourceText(_ path: [String]) -> String {
        path.reduce("$source") { text, step in text + (index(ofStep: step) != nil ? step : "." + step) }
    }

    /// The source key path this expression reads when it is exactly `$source.a.b` (nil otherwise).
    public var plainSourceKeyPath: [String]? {
        if case .source(let path) = self { return path }
        return nil
    }

    /// Whether the expression has one value for every object: it reads no source property and calls no function.
    public var isConstant: Bool {
        switch self {
        case .literal: true
        case .source, .call: false
        case .unary(_, let operand): operand.isConstant
        case .binary(_, let left, let right): left.isConstant && right.isConstant
        }
    }

    /// Every `$source` key path the expression reads, in order of appearance.
    public var sourceKeyPaths: [[String]] {
        switch self {
        case .literal: []
        case .source(let path): [path]
        case .unary(_, let operand): operand.sourceKeyPaths
        case .binary(_, let left, let right): left.sourceKeyPaths + right.sourceKeyPaths
        case .call(_, let arguments): arguments.flatMap(\.sourceKeyPaths)
        }
    }

    /// The fetches the expression makes: `fetch('Entity', 'predicate')` and `fetchCount('Entity', 'predicate')` (an
    /// Xcode mapping model's `FETCH` of source objects), as entity and predicate text.
    public var fetchRequests: [FetchRequest] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.fetchRequests
        case .binary(_, let left, let right): return left.fetchRequests + right.fetchRequests
        case .call(let name, let arguments):
            var found = arguments.flatMap(\.fetchRequests)
            if name == "fetch" || name == "fetchCount", let request = FetchRequest(arguments) { found.insert(request, at: 0) }
            return found
        }
    }

    /// The `fetch(…)` and `fetchCount(…)` calls whose entity or predicate is not a text written in place.
    public var computedFetches: [String] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.computedFetches
        case .binary(_, let left, let right): return left.computedFetches + right.computedFetches
        case .call(let name, let arguments):
            let inner = arguments.flatMap(\.computedFetches)
            if name == "fetch" || name == "fetchCount", FetchRequest(arguments) == nil { return [self.description] + inner }
            return inner
        }
    }

    /// The expression with every call `transform` answers replaced by its answer.
    public func replacingCalls(_ transform: (String, [ValueExpression]) -> ValueExpression?) -> ValueExpression {
        switch self {
        case .literal, .source: return self
        case .unary(let op, let operand): return .unary(op, operand.replacingCalls(transform))
        case .binary(let op, let left, let right):
            return .binary(op, left.replacingCalls(transform), right.replacingCalls(transform))
        case .call(let name, let arguments):
            if let answer = transform(name, arguments) { return answer }
            return .call(name, arguments.map { $0.replacingCalls(transform) })
        }
    }

    /// Whether the expression is one a relationship takes: `$source…`, `nil`, or `mapped`/`mappedThrough` of a name
    /// and a `$source` key path.
    public var givesObjects: Bool {
        switch self {
        case .source, .literal(.null): return true
        case .call("fetch", let arguments): return FetchRequest(arguments) != nil
        case .call(let name, let arguments) where name == "mapped" || name == "mappedThrough":
            guard arguments.count == 2, case .literal(.string) = arguments[0], arguments[1].givesObjects else {
                return false
            }
            return true
        default: return false
        }
    }

    /// The app code the expression calls: `call(class, selector, …)` with literal class and selector.
    public var methodCalls: [(className: String, selector: String)] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.methodCalls
        case .binary(_, let left, let right): return left.methodCalls + right.methodCalls
        case .call(let name, let arguments):
            var found = arguments.flatMap(\.methodCalls)
            if name == "call", arguments.count >= 2, case .literal(.string(let className)) = arguments[0],
                case .literal(.string(let selector)) = arguments[1]
            {
                found.insert((className, selector), at: 0)
            }
            return found
        }
    }

    /// The entity-mapping names the expression's `mapped('Name', …)` calls give.
    public var mappingNames: [String] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.mappingNames
        case .binary(_, let left, let right): return left.mappingNames + right.mappingNames
        case .call(let name, let arguments):
            let inner = arguments.flatMap(\.mappingNames)
            if name == "mapped", let first = arguments.first, case .literal(.string(let mapping)) = first {
                return [mapping] + inner
            }
            return inner
        }
    }

    /// The names of the parameters the expression reads (`$param.bundleID`, `param('bundleID')`).
    public var parameterNames: [String] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.parameterNames
        case .binary(_, let left, let right): return left.parameterNames + right.parameterNames
        case .call(let name, let arguments):
            if name == "param", arguments.count == 1, case .literal(.string(let key)) = arguments[0] { return [key] }
            return arguments.flatMap(\.parameterNames)
        }
    }

    /// The texts of `unsupported('…')` parts: what a mapping model says that has no Decant counterpart.
    public var unsupportedParts: [String] {
        switch self {
        case .literal, .source: return []
        case .unary(_, let operand): return operand.unsupportedParts
        case .binary(_, let left, let right): return left.unsupportedParts + right.unsupportedParts
        case .call("unsupported", let arguments): return arguments.map(\.description)
        case .call(_, let arguments): return arguments.flatMap(\.unsupportedParts)
        }
    }

    public var description: String { render(parentPrecedence: 0) }

    private func render(parentPrecedence: Int) -> String {
        switch self {
        case .literal(let value): return Self.literalText(value)
        case .source(let path): return Self.sourceText(path)
        case .unary(let op, let operand): return op.rawValue + operand.render(parentPrecedence: 7)
        case .call(let name, let arguments):
            return name + "(" + arguments.map { $0.render(parentPrecedence: 0) }.joined(separator: ", ") + ")"
        case .binary(let op, let left, let right):
            let leftPrecedence = op.isRightAssociative ? op.precedence + 1 : op.precedence
            let rightPrecedence = op.isRightAssociative ? op.precedence : op.precedence + 1
            let text =
                left.render(parentPrecedence: leftPrecedence) + " \(op.rawValue) "
                + right.render(parentPrecedence: rightPrecedence)
            return op.precedence < parentPrecedence ? "(\(text))" : text
        }
    }

    /// A literal in expression syntax: strings single-quoted, dates through `parse`.
    static func literalText(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let integer): return String(integer)
        case .double(let real):
            let text = String(real)
            return text.contains(".") || text.contains("e") || text.contains("n") ? text : text + ".0"
        case .decimal(let decimal): return "\(decimal)"
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let text), .uri(let text):
            return "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
                + "'"
        case .date(let date): return "parse('\(ValueExpressionFunctions.isoFormatter.string(from: date))')"
        case .uuid(let uuid): return "'\(uuid.uuidString)'"
        case .data(let data), .transformable(let data): return "'\(data.base64EncodedString())'"
        case .externalDataReference(let name): return "'\(name)'"
        case .composite(let elements):
            // A dictionary literal: the elements in name order.
            let entries = elements.keys.sorted().map { "'\($0)': " + literalText(elements[$0] ?? .null) }
            return "{" + entries.joined(separator: ", ") + "}"
        }
    }
}

/// A fetch of source objects in a mapping: every object of `entity` (and its sub-entities) for which `predicate`
/// (NSPredicate format, over the object's own attributes) holds.
public struct FetchRequest: Sendable, Hashable {
    /// The source entity.
    public var entity: String
    /// The predicate text (`TRUEPREDICATE` for every object).
    public var predicate: String

    /// Creates a request.
    public init(entity: String, predicate: String) {
        self.entity = entity
        self.predicate = predicate
    }

    /// The request two string literal arguments name, if they do.
    init?(_ arguments: [ValueExpression]) {
        guard arguments.count == 2, case .literal(.string(let entity)) = arguments[0],
            case .literal(.string(let predicate)) = arguments[1]
        else { return nil }
        self.init(entity: entity, predicate: predicate)
    }
}

