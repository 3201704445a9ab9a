import DecantCore
import Foundation
import GRDB

/// How one hop turns the rows of its source entities into its destination entities' rows: columns, values
/// computed in SQL, links and members.
extension InStoreMigration.Builder {
    /// The rows of each destination entity of `hop`, from the rows of its source entities.
    func apply(_ hop: MigrationPlan.Hop, to rows: [String: InStoreMigration.Rows], dropped: inout [InStoreMigration.Rows]) throws
        -> [String: InStoreMigration.Rows]
    {
        let source = hop.source
        let destination = hop.destination
        let mappings = hop.mapping.entityMappings
        var live: [EntityMapping] = []
        for (entity, previous) in rows.sorted(by: { $0.key < $1.key }) {
            let readers = mappings.filter { $0.sourceEntity == entity }
            let moving = readers.filter(hop.moves)
            guard let mapping = moving.first else {
                // Objects no mapping takes are dropped; a removal a mapping file states applies delete rules.
                if let removal = readers.first(where: { $0.kind == .remove && $0.origin != .inferred }) {
                    throw InStoreMigration.Obstacle("\(removal.name) removes objects, whose delete rules the record stream applies")
                }
                dropped.append(previous)
                continue
            }
            guard moving.count == 1 else { throw InStoreMigration.Obstacle("\(entity) objects go to \(moving.count) entities") }
            if mapping.filter != nil { throw InStoreMigration.Obstacle("\(mapping.name) filters objects") }
            if mapping.findOrCreate != nil { throw InStoreMigration.Obstacle("\(mapping.name) finds or creates its objects by a key") }
            if mapping.policy != nil { throw InStoreMigration.Obstacle("\(mapping.name) makes its objects with a migration policy") }
            live.append(mapping)
        }
        // Rows go in with their keys: every table written must keep its objects' identities.
        for mapping in mappings where hop.moves(mapping) {
            guard let to = mapping.destinationEntity, !hop.keepsIdentities(of: to) else { continue }
            let table = destination.entity(named: to).map { destination.root(of: $0).name } ?? to
            throw InStoreMigration.Obstacle("the table of \(table) is fed from several source tables or twice, so its objects get new keys")
        }
        var result: [String: InStoreMigration.Rows] = [:]
        for mapping in live {
            guard let from = mapping.sourceEntity, let previous = rows[from], let to = mapping.destinationEntity,
                let sourceLayout = RecordLayout(entity: from, in: source),
                let layout = RecordLayout(entity: to, in: destination)
            else { continue }
            var next = previous
            next.attributes = [:]
            next.toOnes = [:]
            for attribute in layout.attributes {
                next.attributes[attribute.name] = try value(
                    of: attribute, in: mapping, from: sourceLayout, previous: previous)
            }
            next.unreadable = [:]
            next.joins = [:]
            next.emptyToManys = []
            next.toManyObstacles = [:]
            for relationship in layout.relationships {
                if relationship.isToMany {
                    // A to-many a mapping sets is kept by its inverse to-one here: where a mapping of the
                    // members leaves that nil, the record stream says the links are lost.
                    if !hop.isInferred, !Self.isNil(mapping.property(relationship.name)?.expression),
                        let inverse = relationship.inverseName,
                        let member = relationship.inverseEntity ?? relationship.destinationEntity,
                        mappings.contains(where: { members in
                            members.destinationEntity == member && members.kind != .remove
                                && Self.isNil(members.property(inverse)?.expression)
                        })
                    {
                        throw InStoreMigration.Obstacle("\(to).\(relationship.name) is set from its to-many side only")
                    }
                    next.unreadable[relationship.name] = "is a to-many"
                    switch members(of: relationship, in: mapping, hop: hop, previous: previous) {
                    case .joined(let side): next.joins[relationship.name] = side
                    case .empty: next.emptyToManys.insert(relationship.name)
                    case .unknown(let reason): next.toManyObstacles[relationship.name] = reason
                    }
                } else if let link = try link(of: relationship, in: mapping, hop: hop, previous: previous) {
                    next.toOnes[relationship.name] = link
                }
            }
            result[to] = next
        }
        return result
    }

    /// A destination attribute's value.
    private func value(
        of attribute: Attribute, in mapping: EntityMapping, from sourceLayout: RecordLayout, previous: InStoreMigration.Rows
    ) throws -> InStoreMigration.ColumnValue {
        let what = "\(mapping.destinationEntity ?? "?").\(attribute.name)"
        if attribute.derivation != nil { throw InStoreMigration.Obstacle("\(what) is derived") }
        guard let expression = mapping.property(attribute.name)?.expression else { return .constant("NULL") }
        /// `$source.name` when the source attribute keeps its type or widens.
        func column(_ path: [String]) throws -> InStoreMigration.ColumnValue? {
            guard path.count == 1, let index = sourceLayout.attributeIndex(path[0]) else { return nil }
            guard MappingInference.Rules.copies(sourceLayout.attributes[index].type, into: attribute.type) else {
                return nil
            }
            guard let value = previous.attributes[path[0]] else {
                throw InStoreMigration.Obstacle("\(what) reads a value the source table has no column for")
            }
            return value
        }
        if let reason = Self.archiveReading(expression, into: attribute, from: sourceLayout) {
            throw InStoreMigration.Obstacle("\(what) \(reason)")
        }
        switch expression {
        case .source(let path):
            if let value = try column(path) { return value }
        case .binary(.coalesce, .source(let path), let fallback)
        where fallback.isConstant && Self.coalescible.contains(attribute.type):
            if let value = try column(path), let literal = constant(fallback, as: attribute.type) {
                return .coalesce("COALESCE(\(value.sql), \(literal))")
            }
        case .call("double", let arguments)
        where arguments.count == 1 && [.double, .float].contains(attribute.type):
            // An inferred Integer → Double: SQLite's CAST gives the nearest double, as the record stream does.
            if case .source(let path) = arguments[0], path.count == 1,
                let index = sourceLayout.attributeIndex(path[0]),
                [.integer16, .integer32, .integer64].contains(sourceLayout.attributes[index].type),
                let value = previous.attributes[path[0]]
            {
                return .column("CAST(\(value.sql) AS REAL)")
            }
        case let expression where expression.isConstant:
            if let literal = constant(expression, as: attribute.type) { return .constant(literal) }
        default:
            break
        }
        throw InStoreMigration.Obstacle("\(what) is computed by \(expression)")
    }

    /// Why `expression` needs the record stream's reader of keyed archives, which SQL does not have: it reads into
    /// a Transformable or Binary attribute's archived value (`$source.dictionaryData.title`), reads a Transformable
    /// value into a plain type, or archives a plain value for a Transformable `attribute`; nil when it does none.
    static func archiveReading(
        _ expression: ValueExpression, into attribute: Attribute, from sourceLayout: RecordLayout
    ) -> String? {
        func type(_ name: String) -> AttributeType? {
            sourceLayout.attributeIndex(name).map { sourceLayout.attributes[$0].type }
        }
        let holdsArchives: Set<AttributeType> = [.transformable, .binary]
        for path in expression.sourceKeyPaths where path.count > 1 {
            if let first = type(path[0]), holdsArchives.contains(first) {
                return "reads into the archived value of \(sourceLayout.entityName).\(path[0]) "
                    + "(\(ValueExpression.sourceText(path))): each archive is decoded object by object"
            }
        }
        if case .source(let path) = expression, path.count == 1, let source = type(path[0]) {
            if source == .transformable, !holdsArchives.contains(attribute.type) {
                return "reads the archived value of Transformable \(sourceLayout.entityName).\(path[0]) as a "
                    + "\(attribute.type.modelName): each archive is decoded object by object"
            }
            if attribute.type == .transformable, !holdsArchives.contains(source) {
                return "archives \(sourceLayout.entityName).\(path[0]) for a Transformable attribute: each value "
                    + "is archived object by object"
            }
        }
        if expression.callsArchiveFunctions {
            return "is computed by \(expression), which reads or writes keyed archives object by object"
        }
        return nil
    }

    /// Types whose `$source.x ?? constant` SQL's `COALESCE` computes as the record stream does.
    static let coalescible: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .boolean, .double, .float, .date, .string,
    ]

    /// A constant as the SQL literal of the value the record stream would write for `type`, nil when there is
    /// none.
    private func constant(_ expression: ValueExpression, as type: AttributeType) -> String? {
        guard let value = expression.constantValue(as: type, functions: functions) else { return nil }
        let real = [.double, .float, .date].contains(type)
        func realLiteral(_ number: Double) -> String? {
            guard number.isFinite else { return nil }
            return "CAST(\(number.description) AS REAL)"
        }
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return real ? realLiteral(Double(integer)) : String(integer)
        case .bool(let flag): return real ? realLiteral(flag ? 1 : 0) : (flag ? "1" : "0")
        case .double(let number): return realLiteral(number)
        case .date(let date): return realLiteral(date.timeIntervalSinceReferenceDate)
        case .string(let text), .uri(let text):
            return PredicateSQL.textLiteral(text)
        case .data(let data), .transformable(let data):
            return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        case .uuid(let uuid):
            return "X'" + withUnsafeBytes(of: uuid.uuid) { $0.map { String(format: "%02X", $0) }.joined() } + "'"
        case .decimal, .externalDataReference, .composite:
            return nil
        }
    }

    /// Whether a mapping's expression sets nothing.
    private static func isNil(_ expression: ValueExpression?) -> Bool {
        switch expression {
        case nil, .literal(.null)?: true
        default: false
        }
    }

    /// The key a destination to-one holds: the source key when it points at objects that keep their keys.
    private func link(
        of relationship: Relationship, in mapping: EntityMapping, hop: MigrationPlan.Hop, previous: InStoreMigration.Rows
    ) throws -> (sql: String, target: String)? {
        let what = "\(mapping.destinationEntity ?? "?").\(relationship.name)"
        guard let target = relationship.destinationEntity else { return nil }
        switch mapping.property(relationship.name)?.expression {
        case nil, .literal(.null)?:
            return nil
        case .source(let path)? where path.count == 1:
            guard let (sql, pointee) = previous.toOnes[path[0]] else {
                if let reason = previous.unreadable[path[0]] {
                    throw InStoreMigration.Obstacle("\(what) is read from \(path[0]), which \(reason)")
                }
                return nil  // empty in every row
            }
            // Where the record stream sends the reference: the first mapping of the pointee into the target.
            let candidates = hop.mapping.entityMappings.filter { candidate in
                guard candidate.sourceEntity == pointee, candidate.kind != .remove,
                    let to = candidate.destinationEntity.flatMap({ hop.destination.entity(named: $0) }),
                    !to.isAbstract, hop.source.entity(named: pointee) != nil
                else { return false }
                return to.name == target || hop.destination.ancestors(of: to).contains { $0.name == target }
            }
            guard let first = candidates.first else { return nil }
            guard first.destinationEntity == target else {
                throw InStoreMigration.Obstacle("\(what) points at objects that become a sub-entity of \(target)")
            }
            return (sql, target)
        default:
            throw InStoreMigration.Obstacle("\(what) is computed by an expression")
        }
    }

    /// What a to-many's members are after a hop.
    private enum Members {
        /// The rows of a source join table, as they are.
        case joined(InStoreMigration.JoinSide)
        /// None, in every object.
        case empty
        /// Something SQL does not carry here, for this reason.
        case unknown(String)
    }

    /// The members a destination to-many holds: the source's join rows when it is read from a to-many they keep
    /// and its members go to objects that keep their keys, as ``link(of:in:hop:previous:)`` follows a to-one.
    private func members(
        of relationship: Relationship, in mapping: EntityMapping, hop: MigrationPlan.Hop, previous: InStoreMigration.Rows
    ) -> Members {
        let what = "\(mapping.destinationEntity ?? "?").\(relationship.name)"
        guard let target = relationship.destinationEntity else { return .empty }
        switch mapping.property(relationship.name)?.expression {
        case nil, .literal(.null)?:
            return .empty
        case .source(let path)? where path.count == 1:
            if previous.emptyToManys.contains(path[0]) { return .empty }
            guard var side = previous.joins[path[0]] else {
                if let obstacle = previous.toManyObstacles[path[0]] { return .unknown(obstacle) }
                if previous.toOnes[path[0]] != nil { return .unknown("\(what) is read from \(path[0]), a to-one") }
                return .unknown("\(what) is read from \(path[0]), whose members SQL does not carry")
            }
            // Where the record stream sends each member: the first mapping of the pointee into the target.
            let candidates = hop.mapping.entityMappings.filter { candidate in
                guard candidate.sourceEntity == side.pointee, candidate.kind != .remove,
                    let to = candidate.destinationEntity.flatMap({ hop.destination.entity(named: $0) }),
                    !to.isAbstract, hop.source.entity(named: side.pointee) != nil
                else { return false }
                return to.name == target || hop.destination.ancestors(of: to).contains { $0.name == target }
            }
            guard let first = candidates.first else { return .empty }
            guard first.destinationEntity == target else {
                return .unknown("\(what) holds objects that become a sub-entity of \(target)")
            }
            side.pointee = target
            return .joined(side)
        default:
            return .unknown("\(what) is computed by an expression")
        }
    }
}
