import DecantCore

/// Replays Core Data's two schema passes (coredata-formats.md 4.14): the column pass per hierarchy, then the
/// relationship pass over all entities in case-insensitive name order, visiting properties in hash-table order.
struct SchemaBuilder {
    private typealias ForeignKey = StoreSchema.ForeignKey
    private typealias Storage = StoreSchema.RelationshipStorage

    /// A property declared by an entity: `Entity.name`.
    private struct PropertyKey: Hashable {
        var entity: String
        var name: String
    }

    private let model: ObjectModel
    private let style: SchemaStyle
    private var entitiesByName: [String: Entity] = [:]
    private var children: [String: [String]] = [:]
    private var roots: [String] = []
    private var numbering: [String] = []
    private var numbers: [String: Int] = [:]
    private var rootOf: [String: String] = [:]
    private var tableNames: [String: String] = [:]

    private var generators: [String: SchemaNameGenerator] = [:]
    private var pendingColumns: [String: [(column: StoreSchema.Column, group: Int)]] = [:]
    private var uniqueConstraints: [String: [[String]]] = [:]
    private var attributeColumns: [PropertyKey: String] = [:]
    private var compositeColumns: [PropertyKey: [StoreSchema.ElementColumn]] = [:]
    private var foreignKeys: [PropertyKey: ForeignKey] = [:]
    private var storage: [PropertyKey: Storage] = [:]
    private var extraEntries: [String: Int] = [:]
    private var foreignKeyIndexes: [String: [StoreSchema.Index]] = [:]
    private var joinIndexes: [StoreSchema.Index] = []

    /// The entity tables, available after ``build()``.
    private(set) var tables: [StoreSchema.Table] = []
    /// The join tables, available after ``build()``.
    private(set) var joinTables: [StoreSchema.JoinTable] = []

    /// Indexes every entity and numbers it.
    init(model: ObjectModel, style: SchemaStyle) throws {
        self.model = model
        self.style = style
        for entity in model.entities {
            guard entitiesByName.updateValue(entity, forKey: entity.name) == nil else {
                throw DecantError(.malformedInput, "the model declares entity \(entity.name) twice",
                                  at: Location(entity: entity.name))
            }
        }
        for entity in model.entities {
            if let parent = entity.parentName {
                guard entitiesByName[parent] != nil else {
                    throw DecantError(.malformedInput, "parent entity \(parent) does not exist",
                                      at: Location(entity: entity.name))
                }
                children[parent, default: []].append(entity.name)
            } else {
                roots.append(entity.name)
            }
        }
        roots.sort(by: SchemaNaming.caseInsensitiveLess)
        for key in children.keys { children[key]?.sort(by: SchemaNaming.caseInsensitiveLess) }
        for root in roots {
            for name in preorder(from: root) {
                numbering.append(name)
                numbers[name] = numbering.count
                rootOf[name] = root
            }
        }
        if numbering.count != model.entities.count {
            let cyclic = model.entities.map(\.name).filter { numbers[$0] == nil }.sorted()
            throw DecantError(.malformedInput, "entities in an inheritance cycle: \(cyclic.joined(separator: ", "))",
                              at: Location(entity: cyclic.first))
        }
    }

    private func preorder(from name: String) -> [String] {
        var result: [String] = []
        var stack = [name]
        while let next = stack.popLast() {
            result.append(next)
            stack.append(contentsOf: (children[next] ?? []).reversed())
        }
        return result
    }

    private func entity(_ name: String) throws -> Entity {
        guard let entity = entitiesByName[name] else {
            throw DecantError(.malformedInput, "entity \(name) does not exist", at: Location(entity: name))
        }
        return entity
    }

    private func hasSubentities(_ name: String) -> Bool {
        !(children[name] ?? []).isEmpty
    }

    private func number(_ name: String) -> Int { numbers[name] ?? 0 }

    // MARK: - Passes

    /// Runs both passes.
    mutating func build() throws {
        var tableNameGenerator = SchemaNameGenerator(reserved: ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        for root in roots {
            tableNames[root] = tableNameGenerator.uniqueName(base: "Z" + SchemaNaming.unicodeUppercased(root))
            generators[root] = SchemaNameGenerator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
        }
        for root in roots {
            for name in preorder(from: root) { try columnPass(entity: name, root: root) }
        }
        for name in numbering.sorted(by: SchemaNaming.caseInsensitiveLess) {
            try relationshipPass(entity: name, tableNames: &tableNameGenerator)
        }
        for root in roots {
            let fixed = [
                StoreSchema.Column(name: "Z_PK", type: "INTEGER"), StoreSchema.Column(name: "Z_ENT", type: "INTEGER"),
                StoreSchema.Column(name: "Z_OPT", type: "INTEGER"),
            ]
            let pending = pendingColumns[root] ?? []
            let grouped = pending.enumerated().sorted { ($0.element.group, $0.offset) < ($1.element.group, $1.offset) }
            tables.append(StoreSchema.Table(
                name: tableNames[root] ?? root, rootEntity: root, columns: fixed + grouped.map(\.element.column),
                uniqueConstraints: uniqueConstraints[root] ?? []))
        }
    }

    private mutating func addColumn(base: String, type: String, group: Int, root: String) -> String {
        var generator = generators[root] ?? SchemaNameGenerator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
        let name = generator.uniqueName(base: base)
        generators[root] = generator
        pendingColumns[root, default: []].append((StoreSchema.Column(name: name, type: type), group))
        return name
    }

    private mutating func addForeignKeyIndex(column: String, root: String) {
        let table = tableNames[root] ?? root
        foreignKeyIndexes[root, default: []].append(StoreSchema.Index(
            name: "\(table)_\(column)_INDEX", table: table, isUnique: false,
            elements: [.init(column: column, order: nil)]))
    }

    /// The declared type and column group of an attribute type; `nil` for types that get no column.
    private static func columnType(of type: AttributeType) -> (type: String, group: Int)? {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: ("INTEGER", 0)
        case .double, .float: ("FLOAT", 1)
        case .date: ("TIMESTAMP", 1)
        case .decimal: ("DECIMAL", 2)
        case .string, .uri: ("VARCHAR", 3)
        case .uuid: ("BLOB", 4)
        case .transformable: ("BLOB", 5)
        case .binary: ("BLOB", 6)
        case .undefined, .objectID, .composite: nil
        }
    }

    private mutating func columnPass(entity name: String, root: String) throws {
        let entity = try entity(name)
        let table = tableNames[root] ?? root
        for attribute in entity.attributes.filter({ !$0.isTransient }).sorted(by: { SchemaNaming.literalLess($0.name, $1.name) }) {
            if attribute.type == .composite, attribute.derivation == nil {
                try compositeColumns(of: attribute, in: name, root: root)
                continue
            }
            guard let (type, group) = Self.columnType(of: attribute.type) else { continue }
            let column = addColumn(base: "Z" + SchemaNaming.asciiUppercased(attribute.name), type: type, group: group, root: root)
            attributeColumns[PropertyKey(entity: name, name: attribute.name)] = column
        }
        for relationship in entity.relationships.filter({ !$0.isTransient && !$0.isToMany })
            .sorted(by: { SchemaNaming.literalLess($0.name, $1.name) }) {
            let destination = try destinationName(of: relationship, in: name)
            let upper = SchemaNaming.unicodeUppercased(relationship.name)
            let column = addColumn(base: "Z" + upper, type: "INTEGER", group: 0, root: root)
            addForeignKeyIndex(column: column, root: root)
            var entityColumn: String?
            if hasSubentities(destination) {
                entityColumn = addColumn(base: "Z\(number(destination))_" + upper, type: "INTEGER", group: 0, root: root)
            }
            let key = PropertyKey(entity: name, name: relationship.name)
            foreignKeys[key] = ForeignKey(table: table, column: column, entityColumn: entityColumn, orderColumn: nil)
            storage[key] = .toOne(foreignKeys[key] ?? ForeignKey(table: table, column: column))
        }
        if !style.usesUniqueIndexes {
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.sorted(by: SchemaNaming.literalLess).compactMap { self.column(of: $0, in: name) }
                guard !columns.isEmpty, columns.count == constraint.count else { continue }
                uniqueConstraints[root, default: []].append(columns)
            }
        }
    }

    /// A composite's columns (12.5): one per element, in element order, named `Z` + the upper-cased element name
    /// alone, from the hierarchy's name generator (a clash gets the numeric suffix: a second `ZID` is `ZID1`). A
    /// raw-value enum's single element carries the property's name; a payload-free enum has one element per case.
    /// An element of a type with no column (undefined, object ID) is refused.
    private mutating func compositeColumns(of attribute: Attribute, in entityName: String, root: String) throws {
        guard let composite = model.composites.first(where: { $0.name == attribute.compositeName }) else {
            throw DecantError(
                .malformedInput,
                "composite attribute \(attribute.name) names composite type \(attribute.compositeName ?? "(none)"), "
                    + "which the model does not define", at: Location(entity: entityName, keyPath: attribute.name))
        }
        var columns: [StoreSchema.ElementColumn] = []
        // An element that is itself a composite (Xcode allows one; SwiftData never writes one, 12.5) gets no column,
        // as a composite had none before: how Core Data lays it out is not known.
        for element in composite.attributes where element.type != .composite {
            guard let (type, group) = Self.columnType(of: element.type) else {
                throw DecantError(
                    .malformedInput,
                    "element \(element.name) of composite attribute \(attribute.name) is of type \(element.type), which "
                        + "has no column in a SQLite store", at: Location(entity: entityName, keyPath: "\(attribute.name).\(element.name)"))
            }
            let column = addColumn(base: "Z" + SchemaNaming.asciiUppercased(element.name), type: type, group: group, root: root)
            columns.append(StoreSchema.ElementColumn(element: element, column: column))
        }
        compositeColumns[PropertyKey(entity: entityName, name: attribute.name)] = columns
    }

    private func destinationName(of relationship: Relationship, in entityName: String) throws -> String {
        guard let destination = relationship.destinationEntity, entitiesByName[destination] != nil else {
            throw DecantError(
                .malformedInput,
                "relationship \(relationship.name) has no destination entity in the model"
                    + (relationship.destinationEntity.map { " (\($0))" } ?? ""),
                at: Location(entity: entityName, keyPath: relationship.name))
        }
        return destination
    }

    /// The entity (itself or an ancestor) that declares `property`.
    private func declaringEntity(of property: String, from entityName: String) -> String? {
        var current: String? = entityName
        var seen: Set<String> = []
        while let name = current, seen.insert(name).inserted, let entity = entitiesByName[name] {
            if entity.attributes.contains(where: { $0.name == property })
                || entity.relationships.contains(where: { $0.name == property }) {
                return name
            }
            current = entity.parentName
        }
        return nil
    }

    /// The inverse of a relationship and the entity declaring it, when there is one in the model.
    private func inverse(of relationship: Relationship, in entityName: String) throws -> (PropertyKey, Relationship)? {
        guard let inverseName = relationship.inverseName else { return nil }
        let start = try relationship.inverseEntity ?? destinationName(of: relationship, in: entityName)
        guard let declaring = declaringEntity(of: inverseName, from: start),
              let inverse = entitiesByName[declaring]?.relationships.first(where: { $0.name == inverseName }),
              !inverse.isTransient
        else { return nil }
        return (PropertyKey(entity: declaring, name: inverseName), inverse)
    }

    /// Adds `count` hash-table entries to an entity and its sub-entities (hidden keys, order keys).
    private mutating func addEntries(_ count: Int, to name: String) {
        for member in preorder(from: name) { extraEntries[member, default: 0] += count }
    }

    private mutating func relationshipPass(entity name: String, tableNames tableNameGenerator: inout SchemaNameGenerator) throws {
        let (attributes, relationships) = model.properties(of: try entity(name))
        let storedAttributes = attributes.filter { !$0.isTransient }
        let storedRelationships = relationships.filter { !$0.isTransient }
        var entries = 3 + storedAttributes.count + (extraEntries[name] ?? 0)
        for relationship in storedRelationships {
            if relationship.isToMany {
                entries += 1
            } else {
                entries += hasSubentities(try destinationName(of: relationship, in: name)) ? 3 : 2
            }
        }
        let bucketCount = SchemaNaming.bucketCount(forEntries: entries)
        var buckets = [String?](repeating: nil, count: bucketCount)
        let names = storedAttributes.map(\.name).sorted(by: SchemaNaming.literalLess)
            + storedRelationships.map(\.name).sorted(by: SchemaNaming.literalLess)
        for propertyName in names {
            var bucket = Int(SchemaNaming.hash(propertyName) % UInt32(bucketCount))
            while buckets[bucket] != nil { bucket = (bucket + 1) % bucketCount }
            buckets[bucket] = propertyName
        }
        for propertyName in buckets.compactMap({ $0 }) {
            guard let relationship = storedRelationships.first(where: { $0.name == propertyName }),
                  let declaring = declaringEntity(of: propertyName, from: name)
            else { continue }
            try handle(relationship, declaredBy: declaring, tableNames: &tableNameGenerator)
        }
    }

    private mutating func handle(
        _ relationship: Relationship, declaredBy declaring: String, tableNames tableNameGenerator: inout SchemaNameGenerator
    ) throws {
        let key = PropertyKey(entity: declaring, name: relationship.name)
        guard relationship.isToMany, storage[key] == nil else { return }
        let destination = try destinationName(of: relationship, in: declaring)
        let inverse = try inverse(of: relationship, in: declaring)
        if let (inverseKey, inverseRelationship) = inverse, !inverseRelationship.isToMany,
           var foreignKey = foreignKeys[inverseKey], let inverseRoot = rootOf[inverseKey.entity] {
            if relationship.isOrdered && foreignKey.orderColumn == nil {
                foreignKey.orderColumn = addColumn(
                    base: "Z_FOK_" + SchemaNaming.unicodeUppercased(inverseRelationship.name), type: "INTEGER", group: 0,
                    root: inverseRoot)
                addEntries(1, to: inverseKey.entity)
                foreignKeys[inverseKey] = foreignKey
                storage[inverseKey] = .toOne(foreignKey)
            }
            storage[key] = .toManyThroughInverse(foreignKey)
        } else if let (inverseKey, inverseRelationship) = inverse, inverseRelationship.isToMany {
            try addJoinTable(master: key, relationship, slave: inverseKey, inverseRelationship, tableNames: &tableNameGenerator)
        } else {
            guard let destinationRoot = rootOf[destination] else { return }
            let sourceNumber = number(declaring)
            let hiddenName = "\(sourceNumber)" + SchemaNaming.unicodeUppercased(relationship.name)
            let column = addColumn(base: "Z" + hiddenName, type: "INTEGER", group: 0, root: destinationRoot)
            addForeignKeyIndex(column: column, root: destinationRoot)
            var entityColumn: String?
            if hasSubentities(declaring) {
                entityColumn = addColumn(base: "Z\(sourceNumber)_" + hiddenName, type: "INTEGER", group: 0, root: destinationRoot)
            }
            var orderColumn: String?
            if relationship.isOrdered {
                orderColumn = addColumn(base: "Z_FOK_" + hiddenName, type: "INTEGER", group: 0, root: destinationRoot)
            }
            addEntries((entityColumn == nil ? 2 : 3) + (orderColumn == nil ? 0 : 1), to: destination)
            storage[key] = .toManyThroughHiddenKey(ForeignKey(
                table: tableNames[destinationRoot] ?? destinationRoot, column: column, entityColumn: entityColumn,
                orderColumn: orderColumn))
        }
    }

    private mutating func addJoinTable(
        master: PropertyKey, _ masterRelationship: Relationship, slave: PropertyKey, _ slaveRelationship: Relationship,
        tableNames tableNameGenerator: inout SchemaNameGenerator
    ) throws {
        guard let masterRoot = rootOf[master.entity], let slaveRoot = rootOf[slave.entity] else { return }
        let masterNumber = number(master.entity)
        let slaveNumber = number(slave.entity)
        let masterUpper = SchemaNaming.unicodeUppercased(masterRelationship.name)
        let table = tableNameGenerator.uniqueName(base: "Z_\(masterNumber)" + masterUpper)
        let masterColumn: String
        let slaveColumn: String
        var orderColumns: [String] = []
        if master == slave {
            masterColumn = claimJoinColumn(base: "Z_\(masterNumber)" + masterUpper, root: masterRoot)
            slaveColumn = "REFLEXIVE"
            if masterRelationship.isOrdered { orderColumns.append("FOK_REFLEXIVE") }
            storage[master] = .manyToMany(StoreSchema.JoinLink(
                table: table, sourceColumn: masterColumn, destinationColumn: slaveColumn,
                orderColumn: orderColumns.first, isReflexive: true))
        } else {
            slaveColumn = claimJoinColumn(base: "Z_\(slaveNumber)" + masterUpper, root: slaveRoot)
            masterColumn = claimJoinColumn(
                base: "Z_\(masterNumber)" + SchemaNaming.unicodeUppercased(slaveRelationship.name), root: masterRoot)
            let masterOrder = masterRelationship.isOrdered ? "Z_FOK_" + slaveColumn.dropFirst(2) : nil
            let slaveOrder = slaveRelationship.isOrdered ? "Z_FOK_" + masterColumn.dropFirst(2) : nil
            orderColumns = [masterOrder, slaveOrder].compactMap { $0 }
            storage[master] = .manyToMany(StoreSchema.JoinLink(
                table: table, sourceColumn: masterColumn, destinationColumn: slaveColumn, orderColumn: masterOrder,
                isReflexive: false))
            storage[slave] = .manyToMany(StoreSchema.JoinLink(
                table: table, sourceColumn: slaveColumn, destinationColumn: masterColumn, orderColumn: slaveOrder,
                isReflexive: false))
        }
        joinTables.append(StoreSchema.JoinTable(
            name: table, masterColumn: masterColumn, slaveColumn: slaveColumn, orderColumns: orderColumns,
            masterRelationship: "\(master.entity).\(master.name)", slaveRelationship: "\(slave.entity).\(slave.name)"))
        if style.hasJoinTableIndex {
            joinIndexes.append(StoreSchema.Index(
                name: "\(table)_\(slaveColumn)_INDEX", table: table, isUnique: false,
                elements: [.init(column: slaveColumn, order: nil), .init(column: masterColumn, order: nil)]))
        }
    }

    /// A join column name from the hierarchy's generator (the column itself lives in the join table).
    private mutating func claimJoinColumn(base: String, root: String) -> String {
        var generator = generators[root] ?? SchemaNameGenerator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
        let name = generator.uniqueName(base: base)
        generators[root] = generator
        return name
    }

    // MARK: - Results

    /// The per-entity lookup, in number order.
    func makeEntityMappings() -> [StoreSchema.EntityMapping] {
        numbering.map { name in
            let entity = entitiesByName[name]
            var attributeColumns: [String: String] = [:]
            var elementColumns: [String: [StoreSchema.ElementColumn]] = [:]
            var relationshipStorage: [String: Storage] = [:]
            if let entity {
                let (attributes, relationships) = model.properties(of: entity)
                for attribute in attributes {
                    if let declaring = declaringEntity(of: attribute.name, from: name),
                       let columns = compositeColumns[PropertyKey(entity: declaring, name: attribute.name)] {
                        elementColumns[attribute.name] = columns
                    }
                    guard let declaring = declaringEntity(of: attribute.name, from: name),
                          let column = self.attributeColumns[PropertyKey(entity: declaring, name: attribute.name)]
                    else { continue }
                    attributeColumns[attribute.name] = column
                }
                for relationship in relationships {
                    guard let declaring = declaringEntity(of: relationship.name, from: name),
                          let stored = storage[PropertyKey(entity: declaring, name: relationship.name)]
                    else { continue }
                    relationshipStorage[relationship.name] = stored
                }
            }
            let root = rootOf[name] ?? name
            return StoreSchema.EntityMapping(
                name: name, number: number(name), superNumber: entity?.parentName.map { number($0) } ?? 0,
                tableName: tableNames[root] ?? root, hierarchyNumbers: preorder(from: name).map { number($0) },
                attributeColumns: attributeColumns, compositeColumns: elementColumns, relationships: relationshipStorage)
        }
    }

    /// The column of a property named in an index or constraint: an attribute column or a to-one key.
    private func column(of property: String, in entityName: String) -> String? {
        guard let declaring = declaringEntity(of: property, from: entityName) else { return nil }
        let key = PropertyKey(entity: declaring, name: property)
        return attributeColumns[key] ?? foreignKeys[key]?.column
    }

    /// Every index, hierarchy by hierarchy, then the join tables' indexes.
    func makeIndexes() -> [StoreSchema.Index] {
        var result: [StoreSchema.Index] = []
        for root in roots {
            let table = tableNames[root] ?? root
            let members = preorder(from: root).compactMap { entitiesByName[$0] }
            var legacyAttributeIndexes: [StoreSchema.Index] = []
            var descriptions: [StoreSchema.Index] = []
            var legacyCompound: [StoreSchema.Index] = []
            var uniques: [StoreSchema.Index] = []
            for entity in members {
                var indexedAttributes = Set(entity.attributes.filter { $0.isIndexed && !$0.isTransient }.map(\.name))
                var fetchIndexes: [StoreSchema.Index] = []
                for fetchIndex in entity.fetchIndexes {
                    if fetchIndex.elements.count == 1, let element = fetchIndex.elements.first, element.isAscending,
                       element.type == "Binary", let property = element.property,
                       entity.attributes.contains(where: { $0.name == property && !$0.isTransient }) {
                        indexedAttributes.insert(property)
                    }
                    let elements = fetchIndex.elements.compactMap { element -> StoreSchema.Index.Element? in
                        guard element.type == "Binary", let property = element.property,
                              let column = column(of: property, in: entity.name) else { return nil }
                        return .init(column: column, order: "COLLATE BINARY " + (element.isAscending ? "ASC" : "DESC"))
                    }
                    guard !elements.isEmpty, elements.count == fetchIndex.elements.count else { continue }
                    fetchIndexes.append(StoreSchema.Index(
                        name: "Z_\(entity.name)_\(fetchIndex.name)", table: table, isUnique: false, elements: elements))
                }
                let attributeNames = entity.attributes.map(\.name).filter { indexedAttributes.contains($0) }
                    .sorted(by: SchemaNaming.literalLess)
                for attributeName in attributeNames {
                    guard let column = column(of: attributeName, in: entity.name) else { continue }
                    if style.usesModernIndexDescriptions {
                        descriptions.append(StoreSchema.Index(
                            name: "Z_\(entity.name)_\(attributeName)", table: table, isUnique: false,
                            elements: [.init(column: column, order: "COLLATE BINARY ASC")]))
                    } else {
                        legacyAttributeIndexes.append(StoreSchema.Index(
                            name: "\(table)_\(column)_INDEX", table: table, isUnique: false,
                            elements: [.init(column: column, order: nil)]))
                    }
                }
                // A compiled model (.mom, Z_MODELCACHE) also lists each fetch index as a compound index of the same
                // properties; Core Data creates the fetch index alone (SampleModel_V2.sqlite).
                let fetchIndexProperties = Set(entity.fetchIndexes.map { $0.elements.map { $0.property ?? "" } })
                for compound in entity.compoundIndexes where !fetchIndexProperties.contains(compound) {
                    let columns = compound.compactMap { column(of: $0, in: entity.name) }
                    guard !columns.isEmpty, columns.count == compound.count else { continue }
                    if style.usesModernIndexDescriptions {
                        descriptions.append(StoreSchema.Index(
                            name: "Z_\(entity.name)_" + compound.joined(separator: "_"), table: table, isUnique: false,
                            elements: columns.map { .init(column: $0, order: "COLLATE BINARY ASC") }))
                    } else {
                        legacyCompound.append(StoreSchema.Index(
                            name: table + "_" + columns.joined(separator: "_"), table: table, isUnique: false,
                            elements: columns.map { .init(column: $0, order: nil) }))
                    }
                }
                descriptions.append(contentsOf: fetchIndexes)
                if style.usesUniqueIndexes {
                    for constraint in entity.uniquenessConstraints {
                        let columns = constraint.compactMap { column(of: $0, in: entity.name) }
                        guard !columns.isEmpty, columns.count == constraint.count else { continue }
                        uniques.append(StoreSchema.Index(
                            name: "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), table: table,
                            isUnique: true, elements: columns.map { .init(column: $0, order: "COLLATE BINARY ASC") }))
                    }
                }
            }
            result.append(contentsOf: legacyAttributeIndexes)
            result.append(contentsOf: foreignKeyIndexes[root] ?? [])
            if hasSubentities(root), entitiesByName[root]?.userInfo["_NSEntityOmitSubentityColumnIndex"]?.boolValue != true {
                result.append(StoreSchema.Index(
                    name: "\(table)_Z_ENT_INDEX", table: table, isUnique: false, elements: [.init(column: "Z_ENT", order: nil)]))
            }
            result.append(contentsOf: legacyCompound)
            result.append(contentsOf: descriptions)
            result.append(contentsOf: uniques)
        }
        // A compiled model (.mom, Z_MODELCACHE) carries an indexed attribute also as a fetch index named after the
        // attribute, and every fetch index again as a compound index: the same index description reaches here
        // more than once under one name. Core Data creates each name once, as it does from the source model.
        var names: Set<String> = []
        return (result + joinIndexes).filter { names.insert($0.name).inserted }
    }
}
