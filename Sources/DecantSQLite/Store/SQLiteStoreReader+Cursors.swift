import DecantCore
import DecantCodecs
internal import CSQLite
import DecantFormats
import Foundation
import GRDB

extension SQLiteStoreReader {
    // MARK: One entity

    /// How one relationship position of the layout is read.
    enum RelationshipSource {
        case toOne(column: Int32, entityColumn: Int32?, fixedEntity: Int32)
        case members(MemberCursor)
        case viaInverse
        case empty
    }

    /// The open cursor over one concrete entity's rows.
    final class EntityCursor {
        let layout: RecordLayout
        let table: String
        /// Per layout attribute: its column in the SELECT (nil: the table has no column for it), and whether it
        /// allows external storage.
        let attributeSources: [(column: Int32?, external: Bool)]
        /// Per layout attribute: a composite's elements and their columns in the SELECT (nil: not a composite).
        let compositeSources: [[(name: String, type: AttributeType, column: Int32)]?]
        /// Whether any attribute is a composite (most entities have none, and skip the look-up per column).
        let hasComposites: Bool
        /// Per layout attribute: whether it is optional (a required composite with no element value reads as `[:]`).
        let optional: [Bool]
        let sql: String
        var statement: Statement?
        var sources: [RelationshipSource] = []
        var exhausted = false
        /// The record that ended the last batch with lists cut short, and the positions of those relationships whose
        /// further members have not all been delivered yet, in layout order.
        var cutOwner: Int64 = 0
        var cut: [Int] = []
        unowned let reader: SQLiteStoreReader
        let location: Location

        init(reader: SQLiteStoreReader, entity: Entity) throws {
            self.reader = reader
            let location = Location(path: reader.store.displayPath, entity: entity.name)
            guard let layout = RecordLayout(entity: entity.name, in: reader.model) else {
                throw DecantError(.modelMismatch, "the model has no entity \(entity.name)", at: location)
            }
            let plan = try ColumnPlan(layout: layout, schema: reader.schema, path: reader.store.displayPath)
            let mapping = plan.mapping
            self.layout = layout
            self.location = location
            self.table = mapping.tableName
            var columns = ["Z_PK"]
            var attributeSources = layout.attributes.map { (column: Int32?.none, external: $0.allowsExternalBinaryDataStorage) }
            for stored in plan.attributes {
                attributeSources[stored.position].column = Int32(columns.count)
                columns.append(stored.column)
            }
            self.attributeSources = attributeSources
            var compositeSources = [[(name: String, type: AttributeType, column: Int32)]?](
                repeating: nil, count: layout.attributes.count)
            for composite in plan.composites {
                compositeSources[composite.position] = composite.elements.map { element in
                    columns.append(element.column)
                    return (element.element.name, element.element.type, Int32(columns.count - 1))
                }
            }
            self.compositeSources = compositeSources
            self.hasComposites = !plan.composites.isEmpty
            self.optional = layout.attributes.map(\.isOptional)
            var sources: [RelationshipSource] = []
            for planned in plan.relationships {
                let relationship = planned.relationship
                switch planned.storage {
                case .toOne(let key)?:
                    let fixed = reader.model.entities.firstIndex { $0.name == relationship.destinationEntity } ?? 0
                    let column = Int32(columns.count)
                    columns.append(key.column)
                    var entityColumn: Int32?
                    if let name = key.entityColumn {
                        entityColumn = Int32(columns.count)
                        columns.append(name)
                    }
                    sources.append(.toOne(column: column, entityColumn: entityColumn, fixedEntity: Int32(fixed)))
                case .toManyThroughInverse(let key)? where key.orderColumn == nil:
                    sources.append(.viaInverse)
                case .toManyThroughInverse(let key)?, .toManyThroughHiddenKey(let key)?:
                    // Ordered one-to-many (the order lives in Z_FOK_ on the members) and to-many without inverse
                    // (a hidden key on the members): list the members here, in order.
                    let order = key.orderColumn.map { ", \($0)" } ?? ""
                    let fixed = reader.model.entities.firstIndex { $0.name == relationship.destinationEntity } ?? 0
                    sources.append(
                        .members(
                            MemberCursor(
                                select: "SELECT \(key.column), Z_PK, Z_ENT FROM \(key.table)", owner: key.column,
                                order: "\(order.isEmpty ? "" : String(order.dropFirst(2)) + ", ")Z_PK",
                                fixedEntity: Int32(fixed))))
                case .manyToMany(let link)?:
                    guard let destination = relationship.destinationEntity,
                        let destinationTable = reader.schema.entity(named: destination)?.tableName
                    else {
                        sources.append(.empty)
                        continue
                    }
                    let order = link.orderColumn.map { "j.\($0), " } ?? ""
                    let fixed = Int32(reader.model.entities.firstIndex { $0.name == destination } ?? 0)
                    let members = "j.\(link.sourceColumn), j.\(link.destinationColumn)"
                    // A member's entity is its row's `Z_ENT`, which only a join with the destination's table tells;
                    // when that table holds the destination alone (no sub-entities), every member is of it, and
                    // the join (a look-up per member: a quarter of a second for a million) is left out.
                    let select =
                        reader.knowsMemberEntity(destination, table: destinationTable)
                        ? "SELECT \(members) FROM \(link.table) j"
                        : "SELECT \(members), d.Z_ENT FROM \(link.table) j "
                            + "LEFT JOIN \(destinationTable) d ON d.Z_PK = j.\(link.destinationColumn)"
                    sources.append(
                        .members(
                            MemberCursor(
                                select: select, owner: "j.\(link.sourceColumn)",
                                order: "\(order)j.\(link.destinationColumn)", fixedEntity: fixed)))
                case nil:
                    sources.append(.empty)
                }
            }
            self.sources = sources
            let condition = reader.conditions[entity.name]
            let order = reader.orders[entity.name].map { "\($0), " } ?? ""
            let rows = "FROM \(mapping.tableName) AS t WHERE \(reader.ownRowsCondition(entity.name) ?? "1")"
            self.sql = "SELECT \(columns.joined(separator: ", ")) \(rows)\(condition.map { " AND \($0)" } ?? "") "
                + "ORDER BY \(order)t.Z_PK"
            if let condition {
                let left = try reader.count("SELECT COUNT(*) \(rows) AND NOT (\(condition))", entity: entity.name)
                if left > 0 { reader.filteredOut[entity.name, default: 0] += left }
                reader.rowsRead[mapping.tableName, default: 0] += left
            }
            if !order.isEmpty {
                // Owners no longer come in key order: members are looked up per owner instead of merged.
                for case .members(let cursor) in sources { cursor.perOwner = true }
            }
        }

        /// Appends up to `limit` records, fewer when their to-many members pass the reader's `membersPerBatch`;
        /// returns whether rows may remain. With a `partSize`, a record whose list is longer ends the batch with that
        /// list cut short, and the next calls make the batch a continuation of it instead, until its lists are whole.
        func fill(_ batch: inout RecordBatch, limit: Int, partSize: Int?, db: Database) throws -> Bool {
            if let position = cut.first, case .members(let cursor) = sources[position] {
                let more = try cursor.members(
                    of: cutOwner, limit: partSize, continuing: true, db: db, reader: reader, location: location)
                batch.setContinuation(
                    RecordBatch.Continuation(relationship: position, isFinal: !more), primaryKeys: cursor.keys,
                    entityIndices: cursor.entities)
                if !more { cut.removeFirst() }
                return true
            }
            if exhausted { return false }
            if statement == nil {
                do { statement = try db.makeStatement(sql: sql) } catch {
                    throw DatabaseFailure.wrap(error, "the store's table \(table) does not fit its model", at: location)
                }
            }
            guard let statement else { return false }
            // Hot path: GRDB prepared the statement; stepping and column access use its SQLite handle directly,
            // so no Row or String is created per record.
            let handle = statement.sqliteStatement
            let attributeCount = layout.attributes.count
            // A batch also ends past the reader's `membersPerBatch` to-many members: six tags of a million notes
            // each would otherwise be one batch of six million members (a record's own members always stay whole).
            let memberLimit = reader.membersPerBatch
            // Read once per batch: a stored property of this class read per row is checked for exclusive access at
            // run time, and a composite's optional element list copied per column was retained and released.
            let sources = self.sources
            let hasComposites = self.hasComposites
            while batch.count < limit, batch.references.count < memberLimit {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE {
                    exhausted = true
                    return false
                }
                guard code == SQLITE_ROW else {
                    throw DatabaseFailure.stepFailure(code, db: db, "cannot read rows", at: location)
                }
                let primaryKey = sqlite3_column_int64(handle, 0)
                batch.beginRecord(primaryKey: primaryKey)
                for index in 0..<attributeCount {
                    let source = attributeSources[index]
                    if hasComposites, let elements = compositeSources[index] {
                        appendComposite(handle, elements, optional: optional[index], to: &batch)
                        continue
                    }
                    guard let column = source.column else {
                        batch.appendNull()
                        continue
                    }
                    try appendColumn(handle, column, to: &batch, attribute: index, external: source.external, row: primaryKey)
                }
                for (position, source) in sources.enumerated() {
                    switch source {
                    case .toOne(let column, let entityColumn, let fixedEntity):
                        if sqlite3_column_type(handle, column) == SQLITE_NULL {
                            batch.appendNull()
                        } else {
                            var entity = fixedEntity
                            if let entityColumn, sqlite3_column_type(handle, entityColumn) != SQLITE_NULL {
                                let number = Int(sqlite3_column_int64(handle, entityColumn))
                                entity = reader.entityIndexByNumber[number] ?? fixedEntity
                            }
                            batch.appendReference(primaryKey: sqlite3_column_int64(handle, column), entityIndex: entity)
                        }
                    case .members(let cursor):
                        let more = try cursor.members(
                            of: primaryKey, limit: partSize, continuing: false, db: db, reader: reader,
                            location: location)
                        if more {
                            batch.appendContinuedReferenceList(primaryKeys: cursor.keys, entityIndices: cursor.entities)
                            cut.append(position)
                        } else {
                            batch.appendReferenceList(primaryKeys: cursor.keys, entityIndices: cursor.entities)
                        }
                    case .viaInverse:
                        batch.appendViaInverse()
                    case .empty:
                        batch.appendReferenceList(primaryKeys: [], entityIndices: [])
                    }
                }
                batch.endRecord()
                if !cut.isEmpty {
                    // The rest of its lists come in the next batches, before any further record.
                    cutOwner = primaryKey
                    return true
                }
            }
            return true
        }

        /// A composite's value from its element columns: a dictionary of the non-NULL elements, each typed by its
        /// element. When every element column is NULL: nil for an optional composite (Core Data stores a nil one
        /// so), an empty dictionary for a required one (SwiftData's `= Tags()` of nil members is stored so too).
        private func appendComposite(
            _ handle: OpaquePointer, _ elements: [(name: String, type: AttributeType, column: Int32)], optional: Bool,
            to batch: inout RecordBatch
        ) {
            var values: [String: Value] = [:]
            for element in elements {
                guard let value = sqlite3_column_value(handle, element.column) else { continue }
                switch sqlite3_value_type(value) {
                case SQLITE_INTEGER:
                    let integer = sqlite3_value_int64(value)
                    switch element.type {
                    case .boolean: values[element.name] = .bool(integer != 0)
                    case .double, .float: values[element.name] = .double(Double(integer))
                    case .date: values[element.name] = .date(Date(timeIntervalSinceReferenceDate: Double(integer)))
                    case .decimal: values[element.name] = .decimal(Decimal(integer))
                    default: values[element.name] = .integer(integer)
                    }
                case SQLITE_FLOAT:
                    let real = sqlite3_value_double(value)
                    switch element.type {
                    case .date: values[element.name] = .date(Date(timeIntervalSinceReferenceDate: real))
                    case .boolean: values[element.name] = .bool(real != 0)
                    case .integer16, .integer32, .integer64:
                        values[element.name] = real.rounded() == real && abs(real) < 9.2e18 ? .integer(Int64(real)) : .double(real)
                    default: values[element.name] = .double(real)
                    }
                case SQLITE_TEXT:
                    let text = sqlite3_value_text(value).map { String(cString: $0) } ?? ""
                    switch element.type {
                    case .uri: values[element.name] = .uri(text)
                    case .decimal: values[element.name] = Decimal(string: text).map(Value.decimal) ?? .string(text)
                    default: values[element.name] = .string(text)
                    }
                case SQLITE_BLOB:
                    let count = Int(sqlite3_value_bytes(value))
                    let data = count == 0 ? Data() : Data(bytes: sqlite3_value_blob(value), count: count)
                    switch element.type {
                    case .uuid where data.count == 16:
                        values[element.name] = .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
                    case .transformable: values[element.name] = .transformable(data)
                    default: values[element.name] = .data(data)
                    }
                default:
                    continue
                }
            }
            if values.isEmpty && optional { batch.appendNull() } else { batch.append(.composite(values), as: .composite) }
        }

        private func appendColumn(
            _ handle: OpaquePointer, _ column: Int32, to batch: inout RecordBatch, attribute: Int, external: Bool,
            row: Int64
        ) throws {
            // One locked column access, then reads of the value without further locking: SQLite documents these
            // reads as not thread-safe, and they need not be, because GRDB serializes all use of the connection.
            guard let value = sqlite3_column_value(handle, column) else { return batch.appendNull() }
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER:
                batch.appendInteger(sqlite3_value_int64(value))
            case SQLITE_FLOAT:
                batch.appendReal(sqlite3_value_double(value))
            case SQLITE_TEXT:
                if let pointer = sqlite3_value_text(value) {
                    batch.appendText(utf8: UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value))))
                } else {
                    batch.appendText("")
                }
            case SQLITE_BLOB:
                let bytes = UnsafeRawBufferPointer(start: sqlite3_value_blob(value), count: Int(sqlite3_value_bytes(value)))
                if external {
                    try appendExternalBinary(bytes, to: &batch, attribute: attribute, row: row)
                } else {
                    batch.appendBlob(raw: bytes)
                }
            default:
                batch.appendNull()
            }
        }

        /// Decodes an external-storage value (``ExternalBinaryValue``), reading a file from `_EXTERNAL_DATA` when
        /// the bytes live there, under the reader's missing-file policy.
        private func appendExternalBinary(
            _ bytes: UnsafeRawBufferPointer, to batch: inout RecordBatch, attribute: Int, row: Int64
        ) throws {
            switch ExternalBinaryValue(tagged: bytes) {
            case .inline(let data), .untagged(let data):
                batch.appendBlob(raw: data)
            case .file(let name):
                var place = location
                place.object = "\(layout.entityName)/p\(row)"
                place.keyPath = layout.attributes[attribute].name
                switch try reader.store.files.externalDataFile(named: name, at: place) {
                case .found(let data):
                    batch.appendBlob(data)
                case .missing(let file):
                    let message = "externally stored value \(name) is missing from \(file.displayPath)"
                    switch reader.missingExternalData {
                    case .fail:
                        throw DecantError(
                            .malformedInput, message + " (--missing-external-data keep or null reads on)", at: place)
                    case .keep:
                        reader.diagnostics.append(
                            Diagnostic(.missingExternalData, message + "; kept as a reference", at: place,
                                       file: file.displayPath))
                        batch.appendExternalDataReference(name)
                    case .null:
                        reader.diagnostics.append(
                            Diagnostic(.missingExternalData, message + "; read as nil", at: place,
                                       file: file.displayPath))
                        batch.appendNull()
                    }
                }
            }
        }
    }

    /// Whether every member of a relationship to `destination` is known to be a `destination` without reading its
    /// row: `table` holds no other entity (no sub-entity, no sibling of a hierarchy). A join row naming no object
    /// then reads, as in the general query, as a member of `destination`.
    func knowsMemberEntity(_ destination: String, table: String) -> Bool {
        !forceMemberEntityJoin
            && schema.entities.allSatisfy { $0.name == destination || $0.tableName != table }
    }

    /// The (owner key, member key[, member entity]) rows of one relationship: read in owner order and merged with
    /// owners that come in key order, or, when owners come in another order (a sort), looked up per owner. Without
    /// an entity column every member is of ``fixedEntity``.
    final class MemberCursor {
        let mergedSQL: String
        let perOwnerSQL: String
        /// The entity index of a member whose row names no entity (or whose query has no entity column).
        let fixedEntity: Int32
        var perOwner = false
        var statement: Statement?
        /// Whether the statement has the member entity column (the third).
        var hasEntityColumn = false
        var pendingRow: (owner: Int64, member: Int64, entity: Int32)?
        var done = false
        /// The members of the last call: kept between calls so that each owner's list reuses their storage.
        private(set) var keys: [Int64] = []
        private(set) var entities: [Int32] = []

        init(select: String, owner: String, order: String, fixedEntity: Int32) {
            self.mergedSQL = "\(select) WHERE \(owner) IS NOT NULL ORDER BY \(owner), \(order)"
            self.perOwnerSQL = "\(select) WHERE \(owner) = ? ORDER BY \(order)"
            self.fixedEntity = fixedEntity
        }

        /// Reads the members of `owner` into ``keys`` and ``entities``, at most `limit` of them (all when nil), and
        /// returns whether more follow; `continuing` reads on after the members of `owner` read last.
        func members(
            of owner: Int64, limit: Int?, continuing: Bool, db: Database, reader: SQLiteStoreReader,
            location: Location
        ) throws -> Bool {
            if statement == nil {
                do { statement = try db.makeStatement(sql: perOwner ? perOwnerSQL : mergedSQL) } catch {
                    throw DatabaseFailure.wrap(error, "the store's relationship tables do not fit its model", at: location)
                }
                hasEntityColumn = statement.map { sqlite3_column_count($0.sqliteStatement) > 2 } ?? false
            }
            keys.removeAll(keepingCapacity: true)
            entities.removeAll(keepingCapacity: true)
            guard let handle = statement?.sqliteStatement else { return false }
            if perOwner && !continuing {
                sqlite3_reset(handle)
                sqlite3_bind_int64(handle, 1, owner)
                pendingRow = nil
                done = false
            }
            let fixedEntity = self.fixedEntity
            let hasEntityColumn = self.hasEntityColumn
            while true {
                if pendingRow == nil && !done {
                    let code = sqlite3_step(handle)
                    if code == SQLITE_ROW {
                        var entity = fixedEntity
                        if hasEntityColumn, sqlite3_column_type(handle, 2) != SQLITE_NULL {
                            // NULL: a join row whose member is missing from the destination's table.
                            entity = reader.entityIndexByNumber[Int(sqlite3_column_int64(handle, 2))] ?? fixedEntity
                        }
                        pendingRow = (sqlite3_column_int64(handle, 0), sqlite3_column_int64(handle, 1), entity)
                    } else if code == SQLITE_DONE {
                        done = true
                    } else {
                        throw DatabaseFailure.stepFailure(code, db: db, "cannot read relationship rows", at: location)
                    }
                }
                guard let row = pendingRow, row.owner <= owner else { break }
                if row.owner == owner {
                    // One more member than the limit: it stays pending, and the list goes on in the next part.
                    if let limit, keys.count >= limit { return true }
                    keys.append(row.member)
                    entities.append(row.entity)
                }
                pendingRow = nil
            }
            return false
        }
    }
}
