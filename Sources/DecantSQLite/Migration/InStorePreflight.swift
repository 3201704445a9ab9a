package import DecantCore
import Foundation
import GRDB

extension InStoreMigration {
    /// What the record stream's dry run of `plan` would find in the store `reader` reads, counted with SQL over the
    /// source's tables instead of reading every object: per destination entity, one pass over the rows its objects
    /// come from, each row's first failure told by a `CASE` in the order the stream checks them (a hop's required
    /// values, then each attribute's rules, then each relationship's), a failure the source object already had
    /// excused as the stream excuses it (``MigrationTransform``: every hop inferred, not `strict`).
    ///
    /// Nil, for the record stream to count, when the counts could differ from the stream's: a hop a mapping states,
    /// a plan the in-store engine does not take (``prepare(plan:reader:functions:)``), a string pattern, a uniqueness
    /// constraint over a computed value, a relationship or a hierarchy whose source scope differs, a value whose SQLite
    /// type the stream would read differently, a text whose bytes and code points lie on two sides of a length bound
    /// (SQLite counts those, Core Data UTF-16 units, which lie between), a reference that dangles or that several
    /// relationships hold to an object the run would reject, rows of no entity, or a chain of hops whose intermediate
    /// values are computed.
    /// - Throws: `.ioError` when the disk or the file system fails.
    package static func preflightCounts(
        plan: MigrationPlan, reader: SQLiteStoreReader, functions: ValueExpressionFunctions, strict: Bool
    ) throws -> PreflightCounts? {
        guard plan.isExecutable, !plan.hops.isEmpty, plan.hops.allSatisfy(\.isInferred) else { return nil }
        do {
            let builder = try Builder(plan: plan, reader: reader, functions: functions)
            let counter = try PreflightCounter(builder: builder, strict: strict)
            return try counter.counts()
        } catch is Obstacle {
            return nil
        } catch {
            if let failure = diskFailure(error, "cannot count the store's objects") { throw failure }
            return nil
        }
    }
}

/// Counts one plan's dry run with SQL (``InStoreMigration/preflightCounts(plan:reader:functions:strict:)``).
private struct PreflightCounter {
    typealias Obstacle = InStoreMigration.Obstacle
    typealias Rows = InStoreMigration.Rows
    typealias ColumnValue = InStoreMigration.ColumnValue

    let builder: InStoreMigration.Builder
    let strict: Bool
    /// The source's rows, each entity's own columns.
    let sources: [String: Rows]
    /// The destination's rows, from the source's through every hop.
    let destinations: [String: Rows]
    /// The source entities whose objects no hop takes (counted, not checked).
    let dropped: [Rows]

    var plan: MigrationPlan { builder.plan }
    var reader: SQLiteStoreReader { builder.reader }

    init(builder: InStoreMigration.Builder, strict: Bool) throws {
        self.builder = builder
        self.strict = strict
        let composed = try builder.composed()
        self.sources = try builder.sourceRows()
        self.destinations = composed.versions.last ?? [:]
        self.dropped = composed.dropped
        if strict && plan.hops.count > 1 {
            throw Obstacle("a strict run refuses a required nil at the hop that first requires it")
        }
        // A hop before the last refuses an object whose required value it computes as nil: only the last hop's
        // refusals are counted here.
        for (index, version) in composed.versions.dropLast().enumerated() {
            let model = plan.hops[index].destination
            for (name, rows) in version {
                guard let layout = RecordLayout(entity: name, in: model) else { continue }
                for attribute in layout.attributes where !attribute.isOptional {
                    let value = rows.attributes[attribute.name] ?? .constant("NULL")
                    if !Self.isCopied(value) && Self.mayBeNull(value) {
                        throw Obstacle("\(name).\(attribute.name) is computed between hops")
                    }
                }
            }
        }
    }

    /// Whether a value is a source column copied as it is through every hop (a `.copy` in each compiled hop).
    static func isCopied(_ value: ColumnValue) -> Bool {
        if case .column(let sql) = value { return sql.hasPrefix("s.") }
        return false
    }

    /// Whether a value may be nil in some row.
    static func mayBeNull(_ value: ColumnValue) -> Bool {
        switch value {
        case .column: true
        case .coalesce(let sql): sql.hasSuffix(", NULL)")
        case .constant(let sql): sql == "NULL"
        }
    }

    /// One destination entity's query: per row the number of its first failure (0: a row SQL cannot judge; nil:
    /// none), and whether the stream's validator would excuse a failure of it.
    private struct EntityQuery {
        /// Conditions true in a row SQL cannot judge as the stream does.
        var undecidable: [String] = []
        /// Per failure, in the stream's order: the condition, and its count key.
        var failures: [(condition: String, key: String)] = []
        /// Failures the hop refuses the object for (the validator never sees those objects).
        var refusals: [String] = []
        /// Failures the validator would excuse.
        var excused: [String] = []
        var arguments: [Double] = []
        /// Per uniqueness constraint, the values its key is made of: a row whose key an earlier row (by primary key,
        /// the order the stream reads them) has is a duplicate (`s.Z_DUP<n>` > 1).
        var constraints: [[String]] = []
        /// The rows of the constraints' scope (a hierarchy's entities in one table), and the order the stream reads
        /// them in; nil: the entity's own rows by primary key.
        var scope: (condition: String, order: String)?

        /// The rows to count, as the `s` of a `FROM`: the table, or the table with each row's place among the rows
        /// sharing its key of each constraint.
        func rows(_ table: String, where condition: String) -> String {
            guard !constraints.isEmpty else { return "\(table) AS s WHERE \(condition)" }
            let order = scope?.order ?? "s.Z_PK"
            let places = constraints.enumerated().map { index, parts in
                "ROW_NUMBER() OVER (PARTITION BY \(parts.joined(separator: ", ")) ORDER BY \(order)) "
                    + "AS Z_DUP\(index + 1)"
            }
            return "(SELECT s.*, \(places.joined(separator: ", ")) FROM \(table) AS s "
                + "WHERE \(scope?.condition ?? condition)) AS s WHERE \(condition)"
        }

        mutating func bind(_ number: Double) -> String {
            arguments.append(number)
            return "?\(arguments.count)"
        }

        /// A row matching `condition` cannot be judged by SQL.
        mutating func undecidable(_ condition: String) {
            undecidable.append(condition)
        }

        /// The hop refuses an object matching `condition` with `key`.
        mutating func refuse(_ condition: String, key: String) {
            failures.append((condition, key))
            refusals.append(condition)
        }

        /// The validator refuses an object matching `condition` with `key`, unless it matches `excuse` (an object
        /// that already broke the rule at the source version).
        mutating func fail(_ condition: String, key: String, excuse: String?) {
            guard let excuse else {
                failures.append((condition, key))
                return
            }
            failures.append(("(\(condition)) AND NOT (\(excuse))", key))
            excused.append("((\(condition)) AND (\(excuse)))")
        }

        /// The `CASE` giving a row's first failure: 0 for a row SQL cannot judge, n for the n-th failure.
        var caseSQL: String {
            var parts: [String] = []
            if !undecidable.isEmpty { parts.append("WHEN " + undecidable.joined(separator: " OR ") + " THEN 0") }
            for (index, failure) in failures.enumerated() {
                parts.append("WHEN \(failure.condition) THEN \(index + 1)")
            }
            return parts.isEmpty ? "NULL" : "CASE " + parts.joined(separator: " ") + " END"
        }

        /// 1 in a row the validator sees that has a failure it excuses, else 0.
        var excusedSQL: String {
            guard !excused.isEmpty else { return "0" }
            let seen = refusals.isEmpty ? "" : "NOT (" + refusals.joined(separator: " OR ") + ") AND "
            return "CASE WHEN \(seen)(\(excused.joined(separator: " OR "))) THEN 1 ELSE 0 END"
        }
    }

    func counts() throws -> PreflightCounts? {
        var objects: [String: Int] = [:]
        var rejects: [String: Int] = [:]
        var carries = false
        var rejectedEntities: Set<String> = []
        var taken: [String: Int] = [:]
        var queries: [String: EntityQuery] = [:]
        for (name, rows) in destinations.sorted(by: { $0.key < $1.key }) {
            let query = try self.query(name, rows)
            queries[name] = query
            let condition = rows.sourceCondition ?? "1"
            // One pass: the rows' codes from a co-routine (its ORDER BY, the table's own order, keeps SQLite from
            // copying the CASE into every sum), summed per code without sorting the rows as GROUP BY would.
            let sums = (0...query.failures.count).map { "SUM(k = \($0))" }.joined(separator: ", ")
            let sql = "SELECT COUNT(*), SUM(e), \(sums) FROM (SELECT \(query.caseSQL) AS k, \(query.excusedSQL) AS e "
                + "FROM \(query.rows(rows.sourceTable, where: condition)) ORDER BY s.Z_PK)"
            let arguments = StatementArguments(query.arguments)
            let found = try reader.store.connection.inDatabase { db in
                try Row.fetchOne(db, sql: sql, arguments: arguments).map { row in
                    (0..<row.count).map { row[$0] as Int? ?? 0 }
                }
            }
            guard let found, found.count == query.failures.count + 3 else { return nil }
            // A row only the stream can judge.
            guard found[2] == 0 else { return nil }
            objects[rows.origin, default: 0] += found[0]
            taken[rows.sourceTable, default: 0] += found[0]
            // The validator notes every excused failure of an object it sees, whether or not another fails it.
            if found[1] > 0 { carries = true }
            for (failure, count) in zip(query.failures, found.dropFirst(3)) where count > 0 {
                rejects[failure.key, default: 0] += count
                rejectedEntities.insert(name)
            }
        }
        // References that name no object.
        for sql in danglingChecks() {
            let found = try reader.store.connection.inDatabase { db in try Int.fetchOne(db, sql: sql) }
            if found != nil { return nil }
        }
        for rows in dropped {
            let count = try reader.store.connection.inDatabase { db in
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM \(rows.sourceTable) AS s WHERE \(rows.sourceCondition ?? "1")") ?? 0
            }
            if count > 0 { objects[rows.origin, default: 0] += count }
            taken[rows.sourceTable, default: 0] += count
        }
        // Every row of a table several entities share belongs to an entity counted (else the reader names what is
        // wrong); an entity alone in its table takes every row.
        for table in Set(reader.schema.entities.map(\.tableName)).sorted()
        where reader.schema.entities.filter({ $0.tableName == table }).count > 1 {
            let count = try reader.store.connection.inDatabase { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
            guard count == taken[table, default: 0] else { return nil }
        }
        // A reference to an object the run rejects dangles.
        for entity in rejectedEntities.sorted() {
            guard let query = queries[entity],
                let found = try danglingReferences(to: entity, rejectedBy: query)
            else { return nil }
            if let (key, count) = found, count > 0 { rejects[key, default: 0] += count }
        }
        return PreflightCounts(objects: objects, rejects: rejects, carriesViolations: carries)
    }

    /// The references to objects of `entity` that `query` rejects: the stream finds one dangling reference per such
    /// object referenced, named by the first object that holds it (in the order it reads them). Nil when objects of
    /// several entities or relationships hold them, whose order SQL does not follow; `.some(nil)` when none does.
    private func danglingReferences(to entity: String, rejectedBy query: EntityQuery) throws -> (String, Int)?? {
        guard let target = destinations[entity] else { return nil }
        var holders: [(key: String, sql: String)] = []
        for (holder, rows) in destinations {
            for (name, link) in rows.toOnes where link.target == entity {
                holders.append(
                    ("\(holder).\(name) dangling",
                        "SELECT COUNT(DISTINCT \(link.sql)) FROM \(rows.sourceTable) AS s WHERE "
                            + "\(rows.sourceCondition ?? "1") AND \(link.sql) IN (SELECT pk FROM rejected)"))
            }
            for (name, side) in rows.joins where side.pointee == entity {
                holders.append(
                    ("\(holder).\(name) dangling",
                        "SELECT COUNT(DISTINCT j.\(side.member)) FROM \(side.table) AS j WHERE j.\(side.member) IN "
                            + "(SELECT pk FROM rejected)"))
            }
        }
        guard holders.count <= 1 else { return nil }
        guard let holder = holders.first else { return .some(nil) }
        let sql = "WITH rejected(pk) AS (SELECT s.Z_PK FROM "
            + query.rows(target.sourceTable, where: target.sourceCondition ?? "1")
            + " AND (\(query.caseSQL)) IS NOT NULL) "
            + holder.sql
        let arguments = StatementArguments(query.arguments)
        let count = try reader.store.connection.inDatabase { db in
            try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0
        }
        return .some((holder.key, count))
    }

    /// The query telling each row's first failure among the rules of destination entity `name`.
    private func query(_ name: String, _ rows: Rows) throws -> EntityQuery {
        let model = plan.destination
        let schema = builder.destinationSchema
        guard let layout = RecordLayout(entity: name, in: model), let mapping = schema.entity(named: name),
            let source = sources[rows.origin], let sourceModel = plan.hops.first?.source,
            let sourceLayout = RecordLayout(entity: rows.origin, in: sourceModel)
        else { throw Obstacle("\(name) has no layout") }
        let rules = ModelValidator.rules(for: layout, in: model)
        let sourceRules = ModelValidator.rules(for: sourceLayout, in: sourceModel)
        var query = EntityQuery()
        // Values SQLite holds in another type than the stream expects, read from the source or written.
        for attribute in sourceLayout.attributes {
            guard case .column(let sql)? = source.attributes[attribute.name],
                let condition = Self.unexpectedType(sql, attribute.type)
            else { continue }
            query.undecidable(condition)
        }
        /// The source attribute a destination value copies, when it is carried as it is.
        func copiedAttribute(_ value: ColumnValue) -> String? {
            guard Self.isCopied(value) else { return nil }
            return source.attributes.first { $0.value.sql == value.sql }?.key
        }
        // The hop refuses an object whose required value it computes as nil (or, strict, copies as nil), first.
        let values = layout.attributes.map { rows.attributes[$0.name] ?? .constant("NULL") }
        for (attribute, value) in zip(layout.attributes, values) where !attribute.isOptional {
            if !strict && Self.isCopied(value) { continue }
            if !Self.isCopied(value) && plan.hops.count > 1, case .column = value {
                throw Obstacle("\(name).\(attribute.name) is computed in a chain of hops")
            }
            if Self.mayBeNull(value) { query.refuse("\(value.sql) IS NULL", key: "\(name).\(attribute.name) optional") }
        }
        for rule in rules.attributes {
            let attribute = layout.attributes[rule.position]
            let value = values[rule.position]
            let v = value.sql
            if rule.pattern != nil { throw Obstacle("\(name).\(attribute.name) has a string pattern") }
            if let condition = Self.unexpectedType(v, attribute.type) {
                query.undecidable(condition)
            }
            let sourceName = strict ? nil : copiedAttribute(value)
            let sourceRule = sourceName.flatMap { name in sourceRules.attributes.first { $0.name == name } }
            let sourceAttribute = sourceName.flatMap { sourceLayout.attributeIndex($0) }.map {
                sourceLayout.attributes[$0]
            }
            let key = "\(name).\(attribute.name)"
            if !rule.isOptional {
                let excuse = sourceRule.map { $0.isOptional ? "0" : "\(v) IS NULL" }
                query.fail("\(v) IS NULL", key: key + " optional", excuse: excuse)
            }
            for (bound, rule, sourceBound, isMaximum) in [
                (rule.minimum, ModelValidator.Rule.min, sourceRule?.minimum, false),
                (rule.maximum, .max, sourceRule?.maximum, true),
            ] {
                guard let bound else { continue }
                var excuse: String?
                if sourceRule != nil {
                    excuse = "0"
                    if let sourceBound, let sourceAttribute {
                        excuse = try breaks(v, sourceAttribute.type, isMaximum, query.bind(sourceBound), &query)
                    }
                }
                let failure = try breaks(v, attribute.type, isMaximum, query.bind(bound), &query)
                query.fail(failure, key: "\(key) \(rule.rawValue)", excuse: excuse)
            }
        }
        for rule in rules.relationships {
            let relationship = layout.relationships[rule.position]
            let key = "\(name).\(relationship.name)"
            switch mapping.relationships[relationship.name] {
            case .toOne?:
                let sql = rows.toOnes[relationship.name]?.sql ?? "NULL"
                guard !rule.isOptional else { continue }
                var excuse: String?
                if !strict, sql.hasPrefix("s."),
                    let from = source.toOnes.first(where: { $0.value.sql == sql })?.key,
                    let sourceRule = sourceRules.relationships.first(where: { $0.name == from })
                {
                    excuse = sourceRule.isOptional || sourceRule.isToMany ? "0" : "\(sql) IS NULL"
                }
                query.fail("\(sql) IS NULL", key: key + " optional", excuse: excuse)
            case .toManyThroughInverse(let foreignKey)? where foreignKey.orderColumn == nil:
                continue  // read as kept by its inverse: no count checked
            case .manyToMany?:
                let count: String
                var sourceRule: ModelValidator.RelationshipRules?
                if let side = rows.joins[relationship.name] {
                    count = "(SELECT COUNT(*) FROM \(side.table) AS j WHERE j.\(side.owner) = s.Z_PK)"
                    if !strict,
                        let from = source.joins.first(where: {
                            $0.value.table == side.table && $0.value.owner == side.owner
                        })?.key
                    {
                        sourceRule = sourceRules.relationships.first { $0.name == from }
                    }
                } else if rows.emptyToManys.contains(relationship.name), rule.minCount == 0 {
                    continue
                } else {
                    throw Obstacle(rows.toManyObstacles[relationship.name] ?? "\(key) holds members SQL does not count")
                }
                if rule.minCount > 0 {
                    let least = rule.isOptional ? 1 : 0
                    var excuse: String?
                    if let sourceRule {
                        let sourceLeast = sourceRule.isOptional ? 1 : 0
                        excuse = sourceRule.minCount > 0
                            ? "\(count) BETWEEN \(sourceLeast) AND \(sourceRule.minCount - 1)" : "0"
                    }
                    query.fail(
                        "\(count) BETWEEN \(least) AND \(rule.minCount - 1)", key: key + " minCount", excuse: excuse)
                }
                if rule.maxCount > 0 {
                    var excuse: String?
                    if let sourceRule { excuse = sourceRule.maxCount > 0 ? "\(count) > \(sourceRule.maxCount)" : "0" }
                    query.fail("\(count) > \(rule.maxCount)", key: key + " maxCount", excuse: excuse)
                }
            default:
                throw Obstacle("\(key) is a to-many the stream reads otherwise")
            }
        }
        for constraint in rules.constraints {
            try unique(constraint, of: name, values: values, source: (rows: source, rules: sourceRules), &query)
        }
        return query
    }

    /// Counts the objects after the first (in the order the stream reads them) with the same values of `constraint`:
    /// integer, string and Boolean attributes copied as they are, whose keys the stream compares as SQL does (texts
    /// byte for byte, nils equal), of one entity or of a hierarchy's entities that share one table.
    private func unique(
        _ constraint: ModelValidator.ConstraintRules, of name: String, values: [ColumnValue],
        source: (rows: Rows, rules: ModelValidator.EntityRules), _ query: inout EntityQuery
    ) throws {
        let key = "\(name).\(constraint.names.joined(separator: ",")) unique"
        guard constraint.relationships.isEmpty, let layout = RecordLayout(entity: name, in: plan.destination) else {
            throw Obstacle("\(key): a constraint over a relationship")
        }
        // The entities whose objects share the constraint's keys: every one must read the same values from the same
        // table, each row placed as the stream reads it (entity by entity in the source model's order, by key).
        let scope = try destinations.filter { other, _ in
            guard let otherLayout = RecordLayout(entity: other, in: plan.destination) else { return false }
            return ModelValidator.rules(for: otherLayout, in: plan.destination).constraints.contains {
                $0.scope == constraint.scope
            }
        }.map { other, rows -> (origin: String, number: Int) in
            guard rows.sourceTable == destinations[name]?.sourceTable,
                let otherLayout = RecordLayout(entity: other, in: plan.destination),
                let number = reader.entityNumbers[rows.origin] ?? reader.schema.entity(named: rows.origin)?.number,
                constraint.names.allSatisfy({ attribute in
                    let index = otherLayout.attributeIndex(attribute) ?? -1
                    let own = values[layout.attributeIndex(attribute) ?? 0].sql
                    return index >= 0 && rows.attributes[attribute]?.sql == own
                        && (rows.attributes[attribute].map(Self.isCopied) ?? false)
                })
            else { throw Obstacle("\(key): entities sharing it read different values") }
            return (rows.origin, number)
        }
        let spansHierarchy = scope.count > 1
        if spansHierarchy {
            let order = reader.model.entities.map(\.name)
            let sorted = scope.sorted {
                (order.firstIndex(of: $0.origin) ?? 0) < (order.firstIndex(of: $1.origin) ?? 0)
            }
            let numbers = sorted.map { String($0.number) }
            let place = sorted.enumerated().map { "WHEN \($0.element.number) THEN \($0.offset)" }.joined(separator: " ")
            let found = (
                condition: "s.Z_ENT IN (\(numbers.joined(separator: ", ")))", order: "CASE s.Z_ENT \(place) END, s.Z_PK"
            )
            if let known = query.scope, known != found { throw Obstacle("\(key): constraints of different scopes") }
            query.scope = found
        }
        var parts: [String] = []
        var copied: [String] = []
        for position in constraint.attributes {
            let attribute = layout.attributes[position]
            guard [.integer16, .integer32, .integer64, .string, .boolean].contains(attribute.type) else {
                throw Obstacle("\(key): a constraint over a value the stream compares by its description")
            }
            let value = values[position]
            if let condition = Self.unexpectedType(value.sql, attribute.type) {
                query.undecidable(condition)
            }
            parts.append(value.sql)
            if Self.isCopied(value),
                let from = source.rows.attributes.first(where: { $0.value.sql == value.sql })?.key
            {
                copied.append(from)
            }
        }
        query.constraints.append(parts)
        let duplicate = "s.Z_DUP\(query.constraints.count) > 1"
        // The source's own constraint over the same values, in the same order, finds the same duplicates: excused
        // (across a hierarchy, whose source scope may differ, a duplicate is for the stream to judge).
        let excused =
            !strict && copied.count == parts.count
            && source.rules.constraints.contains { $0.names == copied && $0.relationships.isEmpty }
        if excused && spansHierarchy { query.undecidable(duplicate) }
        query.fail(duplicate, key: key, excuse: excused ? duplicate : nil)
    }

    /// The condition true in a row whose value `value` of `type` is below (or, `isMaximum`, above) the bound `bound`
    /// as the stream measures it: the number (as a double), the date's seconds, or a string's length in UTF-16 units.
    /// SQLite knows a text's bytes and code points, between which its UTF-16 length lies: a row whose bytes and code
    /// points fall on two sides of the bound is one SQL cannot judge.
    private func breaks(
        _ value: String, _ type: AttributeType, _ isMaximum: Bool, _ bound: String, _ query: inout EntityQuery
    ) throws -> String {
        switch type {
        case .integer16, .integer32, .integer64, .double, .date:
            return "CAST(\(value) AS REAL) \(isMaximum ? ">" : "<") \(bound)"
        case .string:
            let bytes = "length(CAST(\(value) AS BLOB))"
            let points = "length(\(value))"
            if isMaximum {
                query.undecidable("(\(bytes) > \(bound) AND \(points) <= \(bound))")
                return "(\(bytes) > \(bound) AND \(points) > \(bound))"
            }
            query.undecidable("(\(value) IS NOT NULL AND \(bytes) >= \(bound) AND \(points) < \(bound))")
            return "\(bytes) < \(bound)"
        default:
            throw Obstacle("a bound on a value of type \(type) is measured by the stream only")
        }
    }

    /// The condition true in a row whose column `column` holds a value of another SQLite type than the stream reads
    /// for `type` (comparisons with an empty text and blob are cheaper than `typeof`: numbers sort before texts, texts
    /// before blobs).
    static func unexpectedType(_ column: String, _ type: AttributeType) -> String? {
        switch type {
        case .string: "(\(column) < '' OR \(column) >= X'')"
        case .double, .float, .date, .decimal: "\(column) >= ''"
        case .binary, .transformable: "\(column) < X''"
        default: InStoreMigration.Builder.unexpectedType(column, type)
        }
    }

    /// The queries returning a row when a reference names no object: a to-one's key (its distinct keys, read from
    /// its index), or a member of a to-many held by an object.
    private func danglingChecks() -> [String] {
        var checks: [String] = []
        for (_, rows) in destinations.sorted(by: { $0.key < $1.key }) {
            let condition = rows.sourceCondition ?? "1"
            for (_, link) in rows.toOnes.sorted(by: { $0.key < $1.key }) {
                checks.append(
                    "SELECT 1 FROM (SELECT DISTINCT \(link.sql) AS k FROM \(rows.sourceTable) AS s "
                        + "WHERE \(condition) AND \(link.sql) IS NOT NULL) "
                        + "WHERE NOT EXISTS (\(objects(of: link.target, key: "k"))) LIMIT 1")
            }
            for (_, side) in rows.joins.sorted(by: { $0.key < $1.key }) {
                checks.append(
                    "SELECT 1 FROM \(side.table) AS j WHERE j.\(side.owner) IN (SELECT s.Z_PK FROM \(rows.sourceTable) "
                        + "AS s WHERE \(condition)) "
                        + "AND NOT EXISTS (\(objects(of: side.pointee, key: "j.\(side.member)"))) LIMIT 1")
            }
        }
        return checks
    }

    /// A query returning a row when `key` is the primary key of an object of destination entity `entity` (an object of
    /// a sub-entity is not one: such a reference is for the stream to judge).
    private func objects(of entity: String, key: String) -> String {
        guard let rows = destinations[entity] else { return "SELECT 1 WHERE 0" }
        let condition = reader.ownRowsCondition(rows.origin, alias: "u").map { " AND \($0)" } ?? ""
        return "SELECT 1 FROM \(rows.sourceTable) AS u WHERE u.Z_PK = \(key)\(condition)"
    }
}
