import DecantCore
import Foundation

/// Renders archived `NSExpression` and `NSPredicate` objects as their format strings (`count:(items)`,
/// `length >= 1`), which is what Core Data hashes for derived attributes and what users read.
///
/// Covers the shapes compiled models and mapping models use: constants, `SELF`, variables, key paths,
/// function expressions (built-in functions, `valueForKeyPath:` key-path functions, `FUNCTION(…)` calls),
/// fetch-request expressions, and comparison, compound, true and false predicates.
///
/// Hostile graphs are bounded: nesting deeper than 64 levels throws, and so does rendering more than 100,000
/// objects in all (a sub-expression shared by several parents is rendered once per parent, so a small archive could
/// otherwise take exponential time).
struct ArchivedExpressionFormat {
    let archive: KeyedArchive
    private static let maximumDepth = 64
    private static let maximumVisits = 100_000
    private let visits = VisitCounter()

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// Counts the objects rendered by one formatter (shared by its copies).
    private final class VisitCounter {
        package var count = 0
    }

    /// Counts one more rendered object, throwing past the limits.
    private func enter(_ object: ArchivedObject, depth: Int) throws {
        guard depth < Self.maximumDepth else { throw tooDeep(object) }
        visits.count += 1
        guard visits.count <= Self.maximumVisits else {
            throw DecantError(
                .malformedInput, "expressions refer to shared objects more than \(Self.maximumVisits) times",
                at: Location(path: archive.path, object: "$objects[\(object.index)]"))
        }
    }

    /// The format of the expression object `value` refers to; `nil` for nil.
    func expression(_ value: PropertyListValue?, depth: Int = 0) throws -> String? {
        guard let object = try archive.object(for: value) else { return nil }
        try enter(object, depth: depth)
        switch try archive.integer(forKey: "NSExpressionType", in: object) ?? -1 {
        case 0:
            if let className = try archive.string(forKey: "NSConstantValueClassName", in: object) { return className }
            return try constant(object["NSConstantValue"], depth: depth)
        case 1:
            return "SELF"
        case 2:
            return "$" + (try archive.string(forKey: "NSVariable", in: object) ?? "")
        case 10:
            return try archive.string(forKey: "NSKeyPath", in: object) ?? ""
        case 3 where object["NSKeyPath"] != nil:
            return try archive.string(forKey: "NSKeyPath", in: object) ?? ""
        case 3, 4:
            return try function(object, depth: depth)
        case 50:
            let request = try expression(object["NSFRExpression"], depth: depth + 1) ?? "nil"
            let context = try expression(object["NSMOCExpression"], depth: depth + 1) ?? "nil"
            let countOnly = try archive.bool(forKey: "NSCountOnlyFlag", in: object) ?? false
            return "FETCH(\(request), \(context), \(countOnly ? "YES" : "NO"))"
        default:
            if object.isKind(of: "NSPredicate") { return try predicate(value, depth: depth) }
            return object.className ?? "?"
        }
    }

    /// The format of the predicate object `value` refers to; `nil` for nil.
    func predicate(_ value: PropertyListValue?, depth: Int = 0) throws -> String? {
        guard let object = try archive.object(for: value) else { return nil }
        try enter(object, depth: depth)
        if object.isKind(of: "NSTruePredicate") { return "TRUEPREDICATE" }
        if object.isKind(of: "NSFalsePredicate") { return "FALSEPREDICATE" }
        if object.isKind(of: "NSCompoundPredicate") {
            let parts = try (archive.elements(forKey: "NSSubpredicates", in: object) ?? []).map { part -> String in
                let text = try predicate(part, depth: depth + 1) ?? "nil"
                let isCompound = try archive.object(for: part)?.isKind(of: "NSCompoundPredicate") ?? false
                return isCompound ? "(\(text))" : text
            }
            switch try archive.integer(forKey: "NSCompoundPredicateType", in: object) ?? 1 {
            case 0: return "NOT " + (parts.first ?? "")
            case 2: return parts.joined(separator: " OR ")
            default: return parts.joined(separator: " AND ")
            }
        }
        let left = try expression(object["NSLeftExpression"], depth: depth + 1) ?? "nil"
        let right = try expression(object["NSRightExpression"], depth: depth + 1) ?? "nil"
        var type = try archive.integer(forKey: "NSPredicateOperatorType", in: object)
        var modifier = try archive.integer(forKey: "NSComparisonPredicateModifier", in: object) ?? 0
        var options = try archive.integer(forKey: "NSComparisonPredicateOptions", in: object) ?? 0
        if let operatorObject = try archive.object(forKey: "NSPredicateOperator", in: object) {
            type = try archive.integer(forKey: "NSOperatorType", in: operatorObject) ?? type
            modifier = try archive.integer(forKey: "NSModifier", in: operatorObject) ?? modifier
            options = try archive.integer(forKey: "NSOptions", in: operatorObject) ?? options
        }
        var symbol = Self.operatorSymbols[Int(type ?? 4)] ?? "?"
        if options & 3 != 0 { symbol += "[" + (options & 1 != 0 ? "c" : "") + (options & 2 != 0 ? "d" : "") + "]" }
        let prefix = modifier == 1 ? "ALL " : modifier == 2 ? "ANY " : ""
        return "\(prefix)\(left) \(symbol) \(right)"
    }

    private static let operatorSymbols: [Int: String] = [
        0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH",
        9: "ENDSWITH", 10: "IN", 99: "CONTAINS", 100: "BETWEEN",
    ]

    private func function(_ object: ArchivedObject, depth: Int) throws -> String {
        let selector = try archive.string(forKey: "NSSelectorName", in: object) ?? ""
        let arguments = try (archive.elements(forKey: "NSArguments", in: object) ?? []).map {
            try expression($0, depth: depth + 1) ?? "nil"
        }
        let operandObject = try archive.object(forKey: "NSOperand", in: object)
        if selector == "valueForKeyPath:" || selector == "valueForKey:" {
            let operand = try expression(object["NSOperand"], depth: depth + 1) ?? ""
            let path = arguments.first ?? ""
            return operand == "SELF" || operand.isEmpty ? path : "\(operand).\(path)"
        }
        let operandClass = try operandObject.flatMap { try archive.string(forKey: "NSConstantValueClassName", in: $0) }
        if operandObject == nil || operandClass == "_NSPredicateUtilities" {
            return "\(selector)(\(arguments.joined(separator: ", ")))"
        }
        let operand = try expression(object["NSOperand"], depth: depth + 1) ?? "nil"
        return "FUNCTION(\(([operand, "\"\(selector)\""] + arguments).joined(separator: ", ")))"
    }

    private func constant(_ value: PropertyListValue?, depth: Int) throws -> String {
        switch try archive.resolve(value) {
        case nil:
            return "nil"
        case .inline(let scalar):
            switch scalar {
            case .string(let text): return quoted(text)
            case .integer(let number): return String(number)
            case .real(let number):
                return number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            case .bool(let flag): return flag ? "1" : "0"
            default: return "?"
            }
        case .object(let object):
            try enter(object, depth: depth)
            if let text = try? archive.string(.uid(UInt64(object.index))) { return quoted(text) }
            if object.isKind(of: "NSDate"), let time = try archive.date(.uid(UInt64(object.index))) {
                return "CAST(\(time), \"NSDate\")"
            }
            if let elements = try? archive.elements(.uid(UInt64(object.index))) {
                return "{" + (try elements.map { try constant($0, depth: depth + 1) }).joined(separator: ", ") + "}"
            }
            return object.className ?? "?"
        }
    }

    private func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private func tooDeep(_ object: ArchivedObject) -> DecantError {
        DecantError(
            .malformedInput, "expression nests deeper than \(Self.maximumDepth) levels",
            at: Location(path: archive.path, object: "$objects[\(object.index)]"))
    }
}
