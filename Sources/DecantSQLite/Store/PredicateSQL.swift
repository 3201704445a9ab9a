import DecantCore
import Foundation

/// Translates predicates and sort keys into SQL on an entity's table (aliased `t`), only where SQLite gives
/// exactly the answer the stream would (``ObjectPredicate/evaluate(_:)``): comparisons of attributes with constants of a
/// compatible type, `BEGINSWITH`/`ENDSWITH`/`CONTAINS` without options, `IN`, `BETWEEN`, nil tests, and key paths
/// through to-one relationships (as correlated subqueries). Anything else returns nil and runs in the stream.
///
/// ```swift
/// var sql = PredicateSQL(schema: schema, model: model)
/// sql.condition(try ObjectPredicate(parsing: "pages > 100"), entity: "Book")   // "coalesce((t.ZPAGES > 100), 0)"
/// ```
struct PredicateSQL {
    let schema: StoreSchema
    let model: ObjectModel
    private var aliases = 0

    init(schema: StoreSchema, model: ObjectModel) {
        self.schema = schema
        self.model = model
    }

    /// What a key path ends at.
    enum Target {
        case attribute(AttributeType)
        case toOne
    }

    /// `parts` joined by `connective` as a balanced tree of parentheses: SQLite parses `a AND b AND c …` into a tree
    /// as deep as the list is long, and refuses one deeper than 1,000 (`SQLITE_MAX_EXPR_DEPTH`); a balanced one is
    /// as deep as the list's logarithm.
    static func balanced(_ parts: ArraySlice<String>, _ connective: String) -> String {
        guard parts.count > 1 else { return parts.first.map { "(\($0))" } ?? (connective == " AND " ? "1" : "0") }
        let middle = parts.startIndex + parts.count / 2
        return "(" + balanced(parts[..<middle], connective) + connective + balanced(parts[middle...], connective) + ")"
    }

    /// A SQL condition (0 or 1, never NULL) equivalent to `predicate` for rows of `entity`, or nil.
    mutating func condition(_ predicate: ObjectPredicate, entity: String) -> String? {
        switch predicate {
        case .constant(let flag):
            return flag ? "1" : "0"
        case .and(let terms), .or(let terms):
            var parts: [String] = []
            for term in terms {
                guard let part = condition(term, entity: entity) else { return nil }
                parts.append(part)
            }
            if case .and = predicate { return Self.balanced(parts[...], " AND ") }
            return Self.balanced(parts[...], " OR ")
        case .not(let term):
            return condition(term, entity: entity).map { "(NOT \($0))" }
        case .quantified:
            return nil
        case .comparison(let left, let op, let right, let options):
            guard options.isEmpty else { return nil }
            switch (left, right) {
            case (.keyPath(let path), _):
                return comparison(path, op, right, entity: entity)
            case (.value, .keyPath(let path)):
                guard let mirrored = Self.mirrored(op) else { return nil }
                return comparison(path, mirrored, left, entity: entity)
            default:
                return nil
            }
        }
    }

    /// The SQL expression of a sort key, or nil.
    mutating func sortExpression(_ key: SortKey, entity: String) -> String? {
        guard let (sql, target) = expression(key.keyPath, entity: entity, outer: "t"), case .attribute(let type) = target,
            Self.isNumeric(type) || type == .string
        else { return nil }
        return sql + (key.ascending ? " ASC" : " DESC")
    }

    private mutating func comparison(
        _ path: [String], _ op: ObjectPredicate.ComparisonOperator, _ operand: PredicateOperand, entity: String
    ) -> String? {
        guard let (column, target) = expression(path, entity: entity, outer: "t") else { return nil }
        if case .value(.null) = operand {
            switch op {
            case .equal: return "(\(column) IS NULL)"
            case .notEqual: return "(\(column) IS NOT NULL)"
            case .less, .lessOrEqual, .greater, .greaterOrEqual, .beginsWith, .endsWith, .contains: return "0"
            default: return nil
            }
        }
        guard case .attribute(let type) = target else { return nil }
        switch (op, operand) {
        case (.equal, .value(let value)):
            return Self.literal(value, for: type).map { "(\(column) IS \($0))" }
        case (.notEqual, .value(let value)):
            return Self.literal(value, for: type).map { "(\(column) IS NOT \($0))" }
        case (.less, .value(let value)), (.lessOrEqual, .value(let value)), (.greater, .value(let value)),
            (.greaterOrEqual, .value(let value)):
            return Self.literal(value, for: type).map { "coalesce((\(column) \(op.rawValue) \($0)), 0)" }
        case (.in, .list(let items)):
            var literals: [String] = []
            for item in items {
                guard case .value(let value) = item, !value.isNull, let literal = Self.literal(value, for: type) else {
                    return nil
                }
                literals.append(literal)
            }
            return literals.isEmpty ? "0" : "coalesce((\(column) IN (\(literals.joined(separator: ", ")))), 0)"
        case (.between, .list(let bounds)) where bounds.count == 2:
            guard case .value(let low) = bounds[0], case .value(let high) = bounds[1],
                let lower = Self.literal(low, for: type), let upper = Self.literal(high, for: type)
            else { return nil }
            return "coalesce((\(column) BETWEEN \(lower) AND \(upper)), 0)"
        case (.beginsWith, .value(.string(let text))), (.endsWith, .value(.string(let text))),
            (.contains, .value(.string(let text))):
            guard type == .string, let literal = Self.literal(.string(text), for: type) else { return nil }
            let length = text.unicodeScalars.count
            if length == 0 { return "(\(column) IS NOT NULL)" }
            switch op {
            case .beginsWith: return "coalesce((substr(\(column), 1, \(length)) = \(literal)), 0)"
            case .endsWith: return "coalesce((substr(\(column), -\(length)) = \(literal)), 0)"
            default: return "coalesce((instr(\(column), \(literal)) > 0), 0)"
            }
        default:
            return nil
        }
    }

    /// The SQL value of `path` on a row of `entity` aliased `outer`: a column, or a correlated subquery through
    /// to-one relationships.
    private mutating func expression(_ path: [String], entity: String, outer: String) -> (String, Target)? {
        guard let name = path.first, let mapping = schema.entity(named: entity),
            let modelEntity = model.entity(named: entity)
        else { return nil }
        let (attributes, relationships) = model.properties(of: modelEntity)
        if path.count == 1, let attribute = attributes.first(where: { $0.name == name }),
            let column = mapping.attributeColumns[name]
        {
            return ("\(outer).\(column)", .attribute(attribute.type))
        }
        guard let relationship = relationships.first(where: { $0.name == name && !$0.isToMany }),
            case .toOne(let key)? = mapping.relationships[name]
        else { return nil }
        if path.count == 1 { return ("\(outer).\(key.column)", .toOne) }
        guard let destination = relationship.destinationEntity,
            let destinationTable = schema.entity(named: destination)?.tableName
        else { return nil }
        aliases += 1
        let alias = "d\(aliases)"
        guard let (inner, target) = expression(Array(path.dropFirst()), entity: destination, outer: alias) else {
            return nil
        }
        return ("(SELECT \(inner) FROM \(destinationTable) AS \(alias) WHERE \(alias).Z_PK = \(outer).\(key.column))", target)
    }

    /// A SQL literal for `value` compared with an attribute of `type`, when SQLite compares them as the stream
    /// does; nil otherwise.
    static func literal(_ value: Value, for type: AttributeType) -> String? {
        if isNumeric(type) {
            switch value {
            case .integer(let integer): return "\(integer)"
            case .double(let real) where real.isFinite: return "\(real)"
            case .bool(let flag): return flag ? "1" : "0"
            case .date(let date): return "\(date.timeIntervalSinceReferenceDate)"
            default: return nil
            }
        }
        if type == .string, case .string(let text) = value { return textLiteral(text) }
        return nil
    }

    /// `text` as a SQL string literal (`'it''s'`), or nil when it holds a NUL, which a literal cannot.
    static func textLiteral(_ text: String) -> String? {
        guard !text.utf8.contains(0) else { return nil }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    static func isNumeric(_ type: AttributeType) -> Bool {
        [.integer16, .integer32, .integer64, .double, .float, .boolean, .date].contains(type)
    }

    static func mirrored(_ op: ObjectPredicate.ComparisonOperator) -> ObjectPredicate.ComparisonOperator? {
        switch op {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }
}
