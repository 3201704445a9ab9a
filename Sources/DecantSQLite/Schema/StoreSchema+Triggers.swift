public import DecantCore

extension StoreSchema {
    /// The triggers Core Data creates to maintain derived attributes (coredata-formats.md 4.10), for the shape this
    /// release implements: a count over a to-many relationship whose inverse is a to-one
    /// (`derivationExpression="pages.@count"`, hashed as `count:(pages)`).
    ///
    /// Each such attribute gets five triggers named `Z_DA_<TABLE>_<Entity>_<attribute>_…`: four on the members'
    /// table that keep the count as members are inserted, moved and deleted, and one on the owner's table that
    /// counts on insert. They call `NSCoreDataDATriggerUpdatedAffectedObjectValue` and
    /// `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`, functions Core Data registers on its connections, so
    /// a writer creates them after its rows are in.
    /// - Returns: The statements, and the `Entity.attribute` names of derived attributes of any other shape.
    public func derivedAttributeTriggers(for model: ObjectModel) -> (statements: [String], unsupported: [String]) {
        var statements: [String] = []
        var unsupported: [String] = []
        for entity in model.entities {
            for attribute in entity.attributes where !attribute.isTransient {
                guard let derivation = attribute.derivation else { continue }
                guard derivation.filteringPredicate == nil,
                    let relationshipName = Self.countedRelationship(derivation.expression),
                    let owner = self.entity(named: entity.name),
                    let column = owner.attributeColumns[attribute.name],
                    case .toManyThroughInverse(let key)? = owner.relationships[relationshipName]
                else {
                    unsupported.append("\(entity.name).\(attribute.name)")
                    continue
                }
                statements += Self.countTriggers(
                    ownerTable: owner.tableName, entity: entity.name, attribute: attribute.name, column: column,
                    memberTable: key.table, key: key.column)
            }
        }
        return (statements, unsupported)
    }

    /// `pages` for `count:(pages)`; nil for any other expression.
    private static func countedRelationship(_ expression: String) -> String? {
        guard expression.hasPrefix("count:("), expression.hasSuffix(")") else { return nil }
        let name = expression.dropFirst("count:(".count).dropLast()
        return name.isEmpty || name.contains(where: { !($0.isLetter || $0.isNumber || $0 == "_") }) ? nil : String(name)
    }

    private static func countTriggers(
        ownerTable owner: String, entity: String, attribute: String, column: String, memberTable members: String,
        key: String
    ) -> [String] {
        let prefix = "Z_DA_\(members)_\(entity)_\(attribute)_PARAMETER"
        func report(_ row: String) -> String {
            "SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('\(owner)', Z_ENT, Z_PK, '\(attribute)', \(column)) "
                + "FROM \(owner) WHERE Z_PK = \(row).\(key); END"
        }
        return [
            "CREATE TRIGGER \(prefix)_INSERT AFTER INSERT ON \(members) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN "
                + "UPDATE \(owner) SET \(column) = IFNULL(\(column), 0) + 1 WHERE Z_PK = NEW.\(key); " + report("NEW"),
            "CREATE TRIGGER \(prefix)_UPDATE_INCREMENT AFTER UPDATE OF \(key) ON \(members) FOR EACH ROW WHEN "
                + "(NEW.\(key) NOT NULL) BEGIN UPDATE \(owner) SET \(column) = \(column) + 1 WHERE Z_PK = NEW.\(key); "
                + report("NEW"),
            "CREATE TRIGGER \(prefix)_UPDATE_DECREMENT AFTER UPDATE OF \(key) ON \(members) FOR EACH ROW WHEN "
                + "(OLD.\(key) NOT NULL) BEGIN UPDATE \(owner) SET \(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); "
                + report("OLD"),
            "CREATE TRIGGER \(prefix)_DELETE AFTER DELETE ON \(members) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN "
                + "UPDATE \(owner) SET \(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); " + report("OLD"),
            "CREATE TRIGGER Z_DA_\(owner)_\(entity)_\(attribute)_SOURCE_INSERT AFTER INSERT ON \(owner) FOR EACH ROW BEGIN "
                + "UPDATE \(owner) SET \(column) = (SELECT IFNULL(COUNT(\(key)), 0) FROM \(members) WHERE \(key) = NEW.Z_PK) "
                + "WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('\(owner)', Z_ENT, "
                + "Z_PK, '\(attribute)', \(column)) FROM \(owner) WHERE Z_PK = NEW.Z_PK; END",
        ]
    }
}
