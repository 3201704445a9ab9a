import Foundation

extension ValueExpression {
    /// Evaluates the expression: `source` answers `$source` key paths, `functions` the calls.
    ///
    /// Nil propagates through arithmetic (`nil + 1` is nil) and compares equal only to nil; `??` replaces it.
    /// `+` adds numbers, joins text, and moves a date by a number of seconds.
    /// ```swift
    /// let value = try expression.evaluate(source: { path in record[path] }, functions: ValueExpressionFunctions())
    /// ```
    /// - Throws: `.malformedInput` for operands of the wrong kind or a failing function.
    public func evaluate(source: ([String]) throws -> Value, functions: ValueExpressionFunctions) throws -> Value {
        switch self {
        case .literal(let value):
            return value
        case .source(let path):
            return try source(path)
        case .unary(let op, let operand):
            let value = try operand.evaluate(source: source, functions: functions)
            switch op {
            case .not: return .bool(!value.isTrue)
            case .negate:
                switch value {
                case .null: return .null
                case .integer(let integer):
                    guard integer != .min else { throw ValueOverflow.error("-(\(integer))") }
                    return .integer(-integer)
                default:
                    guard let number = value.number else { throw operandFailure("-", value) }
                    return .double(-number)
                }
            }
        case .call(let name, let arguments):
            let values = try arguments.map { try $0.evaluate(source: source, functions: functions) }
            return try functions.call(name, values)
        case .binary(let op, let leftExpression, let rightExpression):
            let left = try leftExpression.evaluate(source: source, functions: functions)
            switch op {
            case .coalesce:
                return left.isNull ? try rightExpression.evaluate(source: source, functions: functions) : left
            case .and:
                if !left.isTrue { return .bool(false) }
                return .bool(try rightExpression.evaluate(source: source, functions: functions).isTrue)
            case .or:
                if left.isTrue { return .bool(true) }
                return .bool(try rightExpression.evaluate(source: source, functions: functions).isTrue)
            default:
                let right = try rightExpression.evaluate(source: source, functions: functions)
                return try Self.apply(op, left, right)
            }
        }
    }

    private func operandFailure(_ op: String, _ value: Value) -> DecantError {
        DecantError(.malformedInput, "`\(op)` cannot apply to \(value.text ?? "nil") in `\(self)`")
    }

    private static func apply(_ op: BinaryOperator, _ left: Value, _ right: Value) throws -> Value {
        switch op {
        case .equal: return .bool(compare(left, right) == .orderedSame)
        case .notEqual: return .bool(compare(left, right) != .orderedSame)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard !left.isNull, !right.isNull, let order = compare(left, right) else { return .bool(false) }
            switch op {
            case .less: return .bool(order == .orderedAscending)
            case .lessOrEqual: return .bool(order != .orderedDescending)
            case .greater: return .bool(order == .orderedDescending)
            default: return .bool(order != .orderedAscending)
            }
        default:
            break
        }
        if left.isNull || right.isNull { return .null }
        if op == .add {
            if case .date(let date) = left, let seconds = right.number {
                return .date(date.addingTimeInterval(seconds))
            }
            if case .string(let text) = left { return .string(text + (right.text ?? "")) }
            if case .string(let text) = right { return .string((left.text ?? "") + text) }
        }
        if op == .subtract, case .date(let date) = left {
            if case .date(let other) = right { return .double(date.timeIntervalSince(other)) }
            if let seconds = right.number { return .date(date.addingTimeInterval(-seconds)) }
        }
        if case .integer(let a) = left, case .integer(let b) = right {
            let result: (partialValue: Int64, overflow: Bool)
            switch op {
            case .add: result = a.addingReportingOverflow(b)
            case .subtract: result = a.subtractingReportingOverflow(b)
            case .multiply: result = a.multipliedReportingOverflow(by: b)
            case .divide:
                guard b != 0 else { throw DecantError(.malformedInput, "division by zero") }
                guard b != -1 || a != .min else { throw ValueOverflow.error("\(a) / \(b)") }
                return a % b == 0 ? .integer(a / b) : .double(Double(a) / Double(b))
            case .remainder:
                guard b != 0 else { throw DecantError(.malformedInput, "division by zero") }
                // Every whole number divides by -1 (Int64.min % -1 is 0, although Swift's `%` traps on it).
                return .integer(b == -1 ? 0 : a % b)
            default: result = (0, false)
            }
            if op == .add || op == .subtract || op == .multiply {
                guard !result.overflow else { throw ValueOverflow.error("\(a) \(op.rawValue) \(b)") }
                return .integer(result.partialValue)
            }
        }
        guard let a = left.number, let b = right.number else {
            throw DecantError(
                .malformedInput,
                "`\(op.rawValue)` needs numbers, not \(left.text ?? "nil") and \(right.text ?? "nil")"
            )
        }
        switch op {
        case .add: return .double(a + b)
        case .subtract: return .double(a - b)
        case .multiply: return .double(a * b)
        case .divide: return .double(a / b)
        default: return .double(a.truncatingRemainder(dividingBy: b))
        }
    }

    /// Orders two values of comparable kinds; nil when they do not compare.
    static func compare(_ left: Value, _ right: Value) -> ComparisonResult? {
        switch (left, right) {
        case (.null, .null): return .orderedSame
        case (.null, _), (_, .null): return nil
        case (.date(let a), .date(let b)): return a.compare(b)
        case (.string(let a), .string(let b)):
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        case (.bool(let a), .bool(let b)): return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
        default:
            if let a = left.number, let b = right.number, !isText(left) || !isText(right) {
                return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            }
            return left == right ? .orderedSame : nil
        }
    }

    private static func isText(_ value: Value) -> Bool {
        if case .string = value { return true }
        return false
    }
}

extension Value {
    /// The value converted to what an attribute of `type` stores, or nil when it cannot be.
    ///
    /// ```swift
    /// Value.string("12").converted(to: .integer64)   // .integer(12)
    /// ```
    public func converted(to type: AttributeType) -> Value? {
        if isNull { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .integer = self { return self }
            guard let number, number.rounded() == number, let integer = Int64(exactly: number) else { return nil }
            return .integer(integer)
        case .boolean:
            if case .bool = self { return self }
            if case .string(let text) = self, ["true", "false"].contains(text.lowercased()) {
                return .bool(text.lowercased() == "true")
            }
            return number.map { .bool($0 != 0) }
        case .double, .float:
            if case .double = self { return self }
            return number.map(Value.double)
        case .decimal:
            if case .decimal = self { return self }
            if case .string(let text) = self { return Decimal(string: text).map(Value.decimal) }
            // Decimal(Double) traps on an infinity and gives NaN past its range (about 1e165): neither is a value.
            guard let number, number.isFinite, case let decimal = Decimal(number), !decimal.isNaN else { return nil }
            return .decimal(decimal)
        case .string:
            if case .string = self { return self }
            return text.map(Value.string)
        case .date:
            if case .date = self { return self }
            if case .string(let text) = self {
                return (try? ValueExpressionFunctions().call("parse", [.string(text)])).flatMap { $0.isNull ? nil : $0 }
            }
            return nil
        case .uuid:
            if case .uuid = self { return self }
            if case .string(let text) = self { return UUID(uuidString: text).map(Value.uuid) }
            return nil
        case .uri:
            if case .uri = self { return self }
            if case .string(let text) = self { return .uri(text) }
            return nil
        case .binary:
            switch self {
            case .data, .externalDataReference: return self
            case .transformable(let data): return .data(data)
            case .string(let text): return .data(Data(text.utf8))
            default: return nil
            }
        case .transformable:
            switch self {
            case .transformable: return self
            case .data(let data): return .transformable(data)
            default: return nil
            }
        case .undefined, .objectID, .composite:
            return self
        }
    }
}

extension ValueExpression {
    /// The value a constant expression gives an attribute of `type`, as a migration writes it; nil when the
    /// expression reads anything (it is not constant), fails, or gives no value of that type.
    package func constantValue(as type: AttributeType, functions: ValueExpressionFunctions) -> Value? {
        guard isConstant, let value = try? evaluate(source: { _ in .null }, functions: functions) else { return nil }
        return value.converted(to: type)
    }
}

/// The failure of arithmetic whose result a 64-bit integer cannot hold (`-(-9223372036854775807 - 1)`,
/// `floor(1e308)`, `integer('nan')`): NSExpression raises on these, so Decant refuses them rather than wrapping or
/// trapping. The error's ``DecantError/underlyingError`` is a `ValueOverflow`, so a migration can tell a value that
/// cannot be computed (a reject under `--rejects`) from a mapping that cannot run.
public struct ValueOverflow: Error, Sendable, CustomStringConvertible {
    /// The operation that overflowed, as written (`9223372036854775807 + 1`, `floor(1e+308)`).
    public var operation: String

    public var description: String { "\(operation) does not fit a 64-bit integer" }

    /// The error to throw for `operation`.
    static func error(_ operation: String) -> DecantError {
        let overflow = ValueOverflow(operation: operation)
        return DecantError(.malformedInput, overflow.description, underlyingError: overflow)
    }

    /// `number` as a whole 64-bit integer, or the error naming `operation` when it is not finite or out of range.
    static func integer(_ number: Double, _ operation: @autoclosure () -> String) throws -> Int64 {
        // -2^63 is exact as a Double; 2^63 is the first Double above Int64.max.
        guard number.isFinite, number >= -9_223_372_036_854_775_808.0, number < 9_223_372_036_854_775_808.0 else {
            throw error(operation())
        }
        return Int64(number)
    }
}

extension ValueExpression {
    /// The overflow a part of the expression meets on every object, found without reading one: a part that reads
    /// no source property and calls only built-in functions that always give the same answer (not `now()`,
    /// `uuid()`, `call`, `mapped`, `fetch`…), evaluated wherever it is always evaluated (not behind `??`, `&&`,
    /// `||` or a branch of `if`). A mapping file reports it at its line and key before anything runs.
    package func constantOverflow(functions: ValueExpressionFunctions) -> DecantError? {
        switch self {
        case .literal, .source: return nil
        case .unary(_, let operand):
            return foldedOverflow(functions) ?? operand.constantOverflow(functions: functions)
        case .binary(let op, let left, let right):
            if let error = foldedOverflow(functions) { return error }
            if let error = left.constantOverflow(functions: functions) { return error }
            return [.coalesce, .and, .or].contains(op) ? nil : right.constantOverflow(functions: functions)
        case .call(let name, let arguments):
            if let error = foldedOverflow(functions) { return error }
            let always = name == "if" ? Array(arguments.prefix(1)) : arguments
            return always.lazy.compactMap { $0.constantOverflow(functions: functions) }.first
        }
    }

    /// The overflow error evaluating this whole expression throws, when it can be evaluated without an object.
    private func foldedOverflow(_ functions: ValueExpressionFunctions) -> DecantError? {
        guard isFoldable else { return nil }
        do {
            _ = try evaluate(source: { _ in .null }, functions: functions)
            return nil
        } catch let error as DecantError where error.underlyingError is ValueOverflow {
            return error
        } catch {
            return nil
        }
    }

    /// The built-in functions whose answer depends only on their arguments.
    private static let pureFunctions = ValueExpressionFunctions.builtInNames.subtracting([
        "now", "uuid", "call", "mapped", "mappedThrough", "fetch", "fetchCount",
    ])

    /// Whether the expression has one value whatever the object and the run: no source, only pure built-ins.
    private var isFoldable: Bool {
        switch self {
        case .literal: true
        case .source: false
        case .unary(_, let operand): operand.isFoldable
        case .binary(_, let left, let right): left.isFoldable && right.isFoldable
        case .call(let name, let arguments): Self.pureFunctions.contains(name) && arguments.allSatisfy(\.isFoldable)
        }
    }
}
