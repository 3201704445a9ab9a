import DecantCore
import Foundation
import GRDB

/// The SQL that writes each destination entity's rows and join tables, and the queries that find a written row
/// breaking a rule of the destination model.
extension InStoreMigration.Builder {
    /// The statement writing one destination entity's rows, and the queries finding a written row that may
    /// break a rule of the destination model (the validator's rules, ``ModelValidator/rules(for:in:)``).
    func statements(_ name: String, _ rows: InStoreMigration.Rows) throws -> (InStoreMigration.Insert, [InStoreMigration.Check]) {
        let model = plan.destination
        guard let layout = RecordLayout(entity: name, in: model), let mapping = destinationSchema.entity(named: name)
        else { throw InStoreMigration.Obstacle("the destination model has no entity \(name)") }
        let columns = try ColumnPlan(layout: layout, schema: destinationSchema)
        if let unstored = columns.unstored.first {
            throw InStoreMigration.Obstacle("\(name).\(unstored.attribute.name) has no column in a SQLite store")
        }
        if let composite = columns.composites.first {
            throw InStoreMigration.Obstacle("\(name).\(composite.attribute.name) is a composite, whose elements the record stream carries")
        }
        let table = mapping.tableName
        let ownRows = "FROM \(table) AS t WHERE t.Z_ENT = \(mapping.number)"
        var names = ["Z_PK", "Z_ENT", "Z_OPT"]
        // A table taken whole: each row whose `Z_ENT` is not its entity's is told to the stray-row tally as it goes
        // in (one comparison a row, the tally called for those rows only), instead of another pass.
        let entityNumber = rows.sourceCondition == nil
            ? "CASE WHEN s.Z_ENT = \(rows.sourceNumber) THEN \(mapping.number) ELSE \(InStoreMigration.strayTally)("
                + "\(PredicateSQL.textLiteral(rows.sourceTable) ?? "NULL"), s.Z_PK, \(mapping.number)) END"
            : String(mapping.number)
        var values = ["s.Z_PK", entityNumber, "1"]
        /// Conditions on each written row's columns, and on constants (the same for every row).
        var rowConditions: [String] = []
        var constantConditions: [String] = []
        var checks: [InStoreMigration.Check] = []
        let rules = ModelValidator.rules(for: layout, in: model)
        let checked = Dictionary(rules.attributes.map { ($0.position, $0) }, uniquingKeysWith: { first, _ in first })
        let constrained = Set(rules.constraints.flatMap(\.attributes))
        for stored in columns.attributes {
            let attribute = stored.attribute
            if attribute.allowsExternalBinaryDataStorage {
                throw InStoreMigration.Obstacle("\(name).\(attribute.name) may be stored outside the database")
            }
            let written = rows.attributes[attribute.name] ?? .constant("NULL")
            names.append(stored.column)
            values.append(written.sql)
            // A constant is checked once; anything else in the rows written.
            let isConstant = written.isConstant
            let value = isConstant ? written.sql : "t.\(stored.column)"
            var conditions: [String] = []
            let rule = checked[stored.position]
            if rule != nil || constrained.contains(stored.position) || written.isCoalesce {
                if let conformance = Self.unexpectedType(value, attribute.type) { conditions.append(conformance) }
            }
            if let rule {
                if rule.pattern != nil { throw InStoreMigration.Obstacle("\(name).\(attribute.name) has a string pattern") }
                if !rule.isOptional { conditions.append("\(value) IS NULL") }
                if attribute.type == .string {
                    if let minimum = rule.minimum {
                        // SQLite counts code points, Core Data UTF-16 units (NSString's length): only plain
                        // ASCII counts the same for certain.
                        conditions.append(
                            "(\(value) IS NOT NULL AND (length(\(value)) < \(minimum) OR "
                                + "length(CAST(\(value) AS BLOB)) != length(\(value))))")
                    }
                    if let maximum = rule.maximum { conditions.append("length(CAST(\(value) AS BLOB)) > \(maximum)") }
                } else {
                    if let minimum = rule.minimum { conditions.append("\(value) < \(minimum)") }
                    if let maximum = rule.maximum { conditions.append("\(value) > \(maximum)") }
                }
            }
            if isConstant { constantConditions += conditions } else { rowConditions += conditions }
        }
        for planned in columns.relationships {
            let relationship = planned.relationship
            switch planned.storage {
            case .toOne(let key)?:
                guard key.entityColumn == nil, let target = relationship.destinationEntity,
                    let targetMapping = destinationSchema.entity(named: target)
                else { throw InStoreMigration.Obstacle("\(name).\(relationship.name) points into a hierarchy") }
                names.append(key.column)
                let sql = rows.toOnes[relationship.name]?.sql ?? "NULL"
                values.append(sql)
                let what = "\(name).\(relationship.name)"
                if !relationship.isOptional {
                    // Found through the key's index.
                    checks.append(
                        InStoreMigration.Check(
                            sql: "SELECT t.Z_PK FROM \(table) AS t WHERE t.\(key.column) IS NULL AND t.Z_ENT = "
                                + "\(mapping.number) LIMIT 1",
                            reason: "\(what) is required but empty in \(name)/p"))
                }
                guard sql != "NULL" else { continue }
                // Every key must name a row of the target (a text or real key names none). When every entity
                // of the table that stores this column stores this relationship in it, the distinct keys are
                // read from the key's index instead of every row.
                let missing = "NOT EXISTS (SELECT 1 FROM \(targetMapping.tableName) AS u WHERE u.Z_PK = k AND "
                    + "u.Z_ENT = \(targetMapping.number))"
                let shares = sharesColumn(key, of: relationship, table: table)
                let keys = shares
                    ? "SELECT DISTINCT \(key.column) AS k FROM \(table) WHERE \(key.column) IS NOT NULL"
                    : "SELECT t.\(key.column) AS k \(ownRows) AND t.\(key.column) IS NOT NULL"
                let indexed = destinationSchema.indexes.contains {
                    $0.table == table && $0.elements.first?.column == key.column
                }
                checks.append(
                    InStoreMigration.Check(
                        sql: shares && indexed
                            ? Self.missingKeyBySkipScan(key.column, of: table, missing: missing)
                            : "SELECT k FROM (\(keys)) WHERE \(missing) LIMIT 1",
                        reason: "\(what) may point at an object that does not exist: key "))
            case .toManyThroughInverse(let key)? where key.orderColumn == nil:
                continue  // stored by the inverse's key
            case .manyToMany?:
                continue  // written with its join table (``joinStatements(_:_:)``)
            default:
                throw InStoreMigration.Obstacle("\(name).\(relationship.name) is an ordered, many-to-many or inverse-less to-many")
            }
        }
        if !rowConditions.isEmpty {
            checks.append(
                InStoreMigration.Check(
                    sql: "SELECT t.Z_PK \(ownRows) AND (\(rowConditions.joined(separator: " OR "))) LIMIT 1",
                    reason: "a value of \(name) may break a rule of the destination model, which the record stream "
                        + "checks one object at a time: \(name)/p"))
        }
        if !constantConditions.isEmpty {
            checks.append(
                InStoreMigration.Check(
                    sql: "SELECT \(PredicateSQL.textLiteral(name) ?? "NULL") WHERE \(constantConditions.joined(separator: " OR "))",
                    reason: "a constant value breaks a rule of the destination model in "))
        }
        for constraint in rules.constraints {
            guard let owner = destinationSchema.entity(named: constraint.owner) else { continue }
            var keyColumns: [String] = []
            for position in constraint.attributes {
                guard let column = columns.attributes.first(where: { $0.position == position })?.column else { continue }
                keyColumns.append(column)
            }
            for position in constraint.relationships {
                guard case .toOne(let key)? = columns.relationships[position].storage else {
                    throw InStoreMigration.Obstacle("the uniqueness constraint \(constraint.names) of \(name) includes a to-many")
                }
                keyColumns.append(key.column)
            }
            let numbers = owner.hierarchyNumbers.map(String.init).joined(separator: ", ")
            checks.append(
                InStoreMigration.Check(
                    sql: "SELECT \(keyColumns.joined(separator: " || ',' || ")) FROM \(table) WHERE Z_ENT IN (\(numbers)) "
                        + "GROUP BY \(keyColumns.joined(separator: ", ")) HAVING COUNT(*) > 1 LIMIT 1",
                    reason: "objects of \(constraint.owner) share \(constraint.names.joined(separator: ", ")): "))
        }
        // A whole table is read in key order without asking (its b-tree's order: no index covers `Z_ENT`); an
        // `ORDER BY` would make SQLite run the `SELECT` as a co-routine, copying every value once more (about 3% of
        // the copy).
        let sql = "INSERT INTO \(table) (\(names.joined(separator: ", "))) SELECT "
            + values.joined(separator: ", ")
            + " FROM src.\(rows.sourceTable) AS s WHERE \(rows.sourceCondition ?? "1")"
            + (rows.sourceCondition == nil ? "" : " ORDER BY s.Z_PK")
        let insert = InStoreMigration.Insert(
            entity: name, origin: rows.origin, sourceTable: rows.sourceTable, takesEveryRow: rows.sourceCondition == nil,
            sql: sql)
        return (insert, checks)
    }

    /// What one side of a destination join table holds.
    private enum JoinSideState {
        /// No objects of its entity are written.
        case absent
        /// Its objects hold no members.
        case empty
        /// Its objects' members are the rows of a source join table, read from this side; `origin` is the
        /// source entity its objects come from.
        case joined(InStoreMigration.JoinSide, origin: String)
    }

    /// One side of a destination join table: `Entity.relationship` as ``StoreSchema/JoinTable`` names it, with
    /// its link.
    private func joinSide(_ qualified: String, _ rows: [String: InStoreMigration.Rows]) throws
        -> (entity: String, name: String, link: StoreSchema.JoinLink, state: JoinSideState)
    {
        let parts = qualified.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let mapping = destinationSchema.entity(named: parts[0]),
            case .manyToMany(let link)? = mapping.relationships[parts[1]]
        else { throw InStoreMigration.Obstacle("the destination's join table of \(qualified) has no relationship") }
        let (entity, name) = (parts[0], parts[1])
        let fed = mapping.hierarchyNumbers.contains { number in
            destinationSchema.entity(number: number).map { rows[$0.name] != nil } ?? false
        }
        guard fed else { return (entity, name, link, .absent) }
        guard mapping.hierarchyNumbers.count == 1, let own = rows[entity] else {
            throw InStoreMigration.Obstacle("\(qualified) is a many-to-many of a hierarchy of entities")
        }
        if let side = own.joins[name] { return (entity, name, link, .joined(side, origin: own.origin)) }
        if own.emptyToManys.contains(name) { return (entity, name, link, .empty) }
        throw InStoreMigration.Obstacle(own.toManyObstacles[name] ?? "\(qualified) is a many-to-many whose members SQL does not carry")
    }

    /// The statement writing a destination join table's rows from the source's join table, the same rows in the
    /// same order as the record stream writes them (the members of the side it writes first, owner by owner, in
    /// the order it reads them), and the queries finding a row that may break a rule; nil when no object holds
    /// a member.
    ///
    /// Both sides must read the same source join table (or one side's objects be absent, when every row
    /// dangles), from source entities whose objects keep their keys: a row is then written as it is, and a row
    /// whose owner or member is not written is found by the checks, which hand the run to the record stream.
    func joinStatements(_ join: StoreSchema.JoinTable, _ rows: [String: InStoreMigration.Rows]) throws
        -> (sql: String, checks: [InStoreMigration.Check])?
    {
        let master = try joinSide(join.masterRelationship, rows)
        if join.masterRelationship == join.slaveRelationship {
            if case .absent = master.state { return nil }
            throw InStoreMigration.Obstacle("\(join.masterRelationship) is a many-to-many that is its own inverse")
        }
        let slave = try joinSide(join.slaveRelationship, rows)
        // The source columns that feed the master and slave columns, and the sides read, in the order the
        // record stream writes them (its reader goes through the source model's entities in order).
        let source: (table: String, master: String, slave: String)
        var read: [(side: InStoreMigration.JoinSide, origin: String)] = []
        switch (master.state, slave.state) {
        case (.absent, .absent), (.absent, .empty), (.empty, .absent), (.empty, .empty):
            return nil
        case (.joined, .empty), (.empty, .joined):
            throw InStoreMigration.Obstacle("\(join.masterRelationship) and its inverse \(join.slaveRelationship) are not both set")
        case (.joined(let side, let origin), .absent):
            source = (side.table, side.owner, side.member)
            read = [(side, origin)]
        case (.absent, .joined(let side, let origin)):
            source = (side.table, side.member, side.owner)
            read = [(side, origin)]
        case (.joined(let one, let oneOrigin), .joined(let other, let otherOrigin)):
            guard one.table == other.table, one.owner == other.member, one.member == other.owner else {
                throw InStoreMigration.Obstacle(
                    "\(join.masterRelationship) and its inverse \(join.slaveRelationship) are read from different "
                        + "join tables")
            }
            guard oneOrigin != otherOrigin else {
                throw InStoreMigration.Obstacle("both sides of \(join.masterRelationship) are read from objects of \(oneOrigin)")
            }
            source = (one.table, one.owner, one.member)
            read = [(one, oneOrigin), (other, otherOrigin)]
        }
        for (side, other) in [(master, slave), (slave, master)] {
            guard case .joined(let held, _) = side.state, held.pointee != other.entity else { continue }
            throw InStoreMigration.Obstacle("\(side.entity).\(side.name) holds objects of \(held.pointee), not of \(other.entity)")
        }
        let order = reader.model.entities.map(\.name)
        read.sort { (order.firstIndex(of: $0.origin) ?? 0) < (order.firstIndex(of: $1.origin) ?? 0) }
        guard let first = read.first?.side else { return nil }
        var names = [join.masterColumn, join.slaveColumn]
        var values = ["j.\(source.master)", "j.\(source.slave)"]
        // A side's position counts its members from 1 in the order the record stream reads them.
        for (link, state) in [(master.link, master.state), (slave.link, slave.state)] {
            guard let column = link.orderColumn else { continue }
            names.append(column)
            if case .joined(let side, _) = state {
                let sort = (side.order.map { ["j.\($0)"] } ?? []) + ["j.\(side.member)"]
                values.append(
                    "ROW_NUMBER() OVER (PARTITION BY j.\(side.owner) ORDER BY \(sort.joined(separator: ", ")))")
            } else {
                values.append("NULL")
            }
        }
        let sort = ["j.\(first.owner)"] + (first.order.map { ["j.\($0)"] } ?? []) + ["j.\(first.member)"]
        let sql = "INSERT INTO \(join.name) (\(names.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) "
            + "FROM src.\(source.table) AS j ORDER BY \(sort.joined(separator: ", "))"
        var checks: [InStoreMigration.Check] = []
        // Every owner and member is an object written (a key that names none dangles, or its object was not
        // carried over), and each side holds as many members as the destination model allows.
        for (side, other, column) in [(master, slave, join.slaveColumn), (slave, master, join.masterColumn)] {
            guard let pointee = destinationSchema.entity(named: other.entity) else { continue }
            checks.append(
                InStoreMigration.Check(
                    // The distinct keys, read from the primary key's or the join index's order.
                    sql: "SELECT IFNULL(k, 'NULL') FROM (SELECT DISTINCT \(column) AS k FROM \(join.name)) WHERE NOT "
                        + "EXISTS (SELECT 1 FROM \(pointee.tableName) AS u WHERE u.Z_PK = k AND u.Z_ENT = "
                        + "\(pointee.number)) LIMIT 1",
                    reason: "\(side.entity).\(side.name) may hold an object that does not exist: key "))
        }
        for side in [master, slave] {
            if case .absent = side.state { continue }
            checks += try countChecks(side.entity, side.name, owner: side.link.sourceColumn, table: join.name)
        }
        return (sql, checks)
    }

    /// The queries finding an object of `entity` whose `relationship` holds fewer or more members (rows of the
    /// join table `table` whose `owner` column holds its key) than the destination model allows.
    private func countChecks(_ entity: String, _ relationship: String, owner: String, table: String) throws
        -> [InStoreMigration.Check]
    {
        guard let layout = RecordLayout(entity: entity, in: plan.destination),
            let mapping = destinationSchema.entity(named: entity),
            let rule = ModelValidator.rules(for: layout, in: plan.destination).relationships.first(where: {
                $0.name == relationship
            })
        else { throw InStoreMigration.Obstacle("the destination model has no relationship \(entity).\(relationship)") }
        let what = "\(entity).\(relationship)"
        var checks: [InStoreMigration.Check] = []
        if rule.maxCount > 0 {
            checks.append(
                InStoreMigration.Check(
                    sql: "SELECT \(owner) FROM \(table) GROUP BY \(owner) HAVING COUNT(*) > \(rule.maxCount) LIMIT 1",
                    reason: "\(what) may hold more than \(rule.maxCount) objects in \(entity)/p"))
        }
        if rule.minCount > 0 {
            // An optional to-many may be empty whatever its minimum (``ModelValidator``).
            let least = rule.isOptional ? 1 : 0
            checks.append(
                InStoreMigration.Check(
                    sql: "SELECT t.Z_PK FROM \(mapping.tableName) AS t WHERE t.Z_ENT = \(mapping.number) AND (SELECT "
                        + "COUNT(*) FROM \(table) AS j WHERE j.\(owner) = t.Z_PK) BETWEEN \(least) AND "
                        + "\(rule.minCount - 1) LIMIT 1",
                    reason: "\(what) may hold fewer than \(rule.minCount) objects in \(entity)/p"))
        }
        return checks
    }

    /// Whether every entity of `table` that has a column `key.column` stores `relationship` (the same
    /// destination) in it, so every key in the column is one of this relationship's.
    private func sharesColumn(_ key: StoreSchema.ForeignKey, of relationship: Relationship, table: String) -> Bool {
        destinationSchema.entities.filter { $0.tableName == table }.allSatisfy { entity in
            entity.relationships.allSatisfy { name, storage in
                guard case .toOne(let other) = storage, other.column == key.column else { return true }
                let declared = plan.destination.entity(named: entity.name)
                    .flatMap { plan.destination.properties(of: $0).relationships.first { $0.name == name } }
                return other.entityColumn == nil && declared?.destinationEntity == relationship.destinationEntity
            }
        }
    }

    /// How many distinct keys ``missingKeyBySkipScan(_:of:missing:)`` finds one index seek at a time before it reads
    /// the rest of the index in order.
    static let skipScanSeeks = 4096

    /// A query that returns a key of `column` (in `table`, whose index leads with it) for which `missing` (on `k`)
    /// holds. The distinct keys are found one seek each (`MIN(column) … > k`), as long as there are at most
    /// ``skipScanSeeks`` of them; past that, the rest of the index is read in order, as `SELECT DISTINCT` reads it.
    /// A million notes in a thousand folders: a thousand seeks, not a million index entries.
    static func missingKeyBySkipScan(_ column: String, of table: String, missing: String) -> String {
        let cap = skipScanSeeks
        return "WITH RECURSIVE d(k, n) AS (SELECT (SELECT MIN(\(column)) FROM \(table)), 1 UNION ALL "
            + "SELECT (SELECT MIN(\(column)) FROM \(table) WHERE \(column) > d.k), d.n + 1 FROM d "
            + "WHERE d.k IS NOT NULL AND d.n < \(cap)) "
            + "SELECT k FROM d WHERE k IS NOT NULL AND \(missing) UNION ALL "
            + "SELECT k FROM (SELECT DISTINCT \(column) AS k FROM \(table) WHERE \(column) > "
            + "(SELECT k FROM d WHERE n = \(cap))) WHERE \(missing) LIMIT 1"
    }

    /// The condition true for a value whose SQLite type the record stream would read differently from `type`.
    static func unexpectedType(_ column: String, _ type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64: "typeof(\(column)) NOT IN ('integer', 'null')"
        case .boolean: "(typeof(\(column)) NOT IN ('integer', 'null') OR \(column) NOT IN (0, 1))"
        case .double, .float, .date, .decimal: "typeof(\(column)) NOT IN ('integer', 'real', 'null')"
        case .string: "typeof(\(column)) NOT IN ('text', 'null')"
        case .binary, .transformable: "typeof(\(column)) NOT IN ('blob', 'null')"
        default: nil
        }
    }
}
