internal import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import Foundation
import GRDB

extension SQLiteStoreWriter {
    /// The prepared statements and column plan for one entity.
    final class Inserter {
        #if DEBUG
            /// `DECANT_TEST_DROP_OBJECTS` set: the writer drops one chunk of objects (debug builds only), so that
            /// tests can see the run that loses objects end with exit 70.
            static let dropsObjectsForTesting = ProcessInfo.processInfo.environment["DECANT_TEST_DROP_OBJECTS"] != nil
        #endif
        /// An attribute cell bound to an INSERT parameter.
        struct AttributeBinding {
            var cell: Int
            var parameter: Int32
            var asReal: Bool
            var external: Bool
        }

        /// A composite cell (``CompositeValueCoding`` bytes) bound to its elements' parameters (12.5).
        struct CompositeBinding {
            var cell: Int
            var elements: [(name: String, type: AttributeType, parameter: Int32)]
        }

        /// A to-one cell bound to its key parameter and, when the destination has sub-entities, its entity parameter.
        struct ToOneBinding {
            var cell: Int
            var parameter: Int32
            var entityParameter: Int32?
            /// Where a reference by an external id not known yet is staged (``ExternalIdentities``).
            var target: Int
        }

        /// A to-many cell whose members go to a join table (its rows through ``links``, at this index) or a staged
        /// hidden key; `target` stages members by an external id not known yet (``ExternalIdentities``).
        enum MemberTarget {
            case joinTable(links: Int, target: Int)
            case hiddenKey(id: Int, target: Int)
        }

        /// The rows of one join table whose keys are known, inserted ``chunk`` at a time (one step for many rows
        /// costs far less than a step per link, which the join file's million links paid): `values` holds the
        /// pending rows' parameters, owner, member and (when ordered) position, until ``JoinRows/flush(_:)``.
        final class JoinRows {
            let insertOne: Statement
            let insertChunk: Statement
            let width: Int
            let chunk: Int
            var values: [Int64] = []

            init(_ db: Database, link: StoreSchema.JoinLink) throws {
                let columns = [link.sourceColumn, link.destinationColumn] + (link.orderColumn.map { [$0] } ?? [])
                width = columns.count
                chunk = 64
                let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
                // Both sides list the pair; the second insert only adds its own order column.
                func sql(_ rows: Int) -> String {
                    let values = Array(repeating: tuple, count: rows).joined(separator: ", ")
                    if let order = link.orderColumn {
                        return "INSERT INTO \(link.table) (\(columns.joined(separator: ", "))) VALUES \(values) "
                            + "ON CONFLICT DO UPDATE SET \(order) = excluded.\(order)"
                    }
                    return "INSERT OR IGNORE INTO \(link.table) (\(columns.joined(separator: ", "))) VALUES \(values)"
                }
                insertOne = try db.makeStatement(sql: sql(1))
                insertChunk = try db.makeStatement(sql: sql(chunk))
            }

            /// Adds a row; a full chunk goes in at once.
            func append(owner: Int64, member: Int64, position: Int, db: Database) throws {
                values.append(owner)
                values.append(member)
                if width == 3 { values.append(Int64(position)) }
                if values.count == chunk * width { try flush(db) }
            }

            /// Inserts the pending rows, in the order they came (a whole chunk at once, the rest one by one).
            func flush(_ db: Database) throws {
                guard !values.isEmpty else { return }
                defer { values.removeAll(keepingCapacity: true) }
                let rows = values.count / width
                let handle = rows == chunk ? insertChunk.sqliteStatement : insertOne.sqliteStatement
                var index = 0
                while index < values.count {
                    let count = rows == chunk ? chunk * width : width
                    for parameter in 0..<count {
                        sqlite3_bind_int64(handle, Int32(parameter + 1), values[index + parameter])
                    }
                    index += count
                    let code = sqlite3_step(handle)
                    sqlite3_reset(handle)
                    guard code == SQLITE_DONE else {
                        throw DatabaseError(
                            resultCode: ResultCode(rawValue: code),
                            message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                }
            }
        }

        let plan: ColumnPlan
        let entityNumber: Int64
        let table: String
        /// The scope of this table's external ids.
        let scope: Int64
        /// INSERT of one row, and of ``chunk`` rows at once (one step for many rows is much cheaper).
        let insertOne: Statement
        let insertChunk: Statement
        let chunk: Int
        let parameterCount: Int32
        var attributeBindings: [AttributeBinding] = []
        var compositeBindings: [CompositeBinding] = []
        var toOneBindings: [ToOneBinding] = []
        var memberTargets: [(cell: Int, target: MemberTarget)] = []
        /// Per join table this entity's to-many relationships fill: its pending rows.
        var joinRows: [JoinRows] = []
        unowned let writer: SQLiteStoreWriter
        let entityNumbers: [String: Int]
        /// Rows of this entity the store took (SQLite's count of changes, step by step): what the writer reports as
        /// stored (``SQLiteStoreWriter/objectsStored``), checked against the objects it was given.
        var stored = 0
        let entityTables: [String: String]

        init(writer: SQLiteStoreWriter, layout: RecordLayout) throws {
            self.writer = writer
            let plan = try ColumnPlan(layout: layout, schema: writer.schema, path: writer.displayPath)
            self.plan = plan
            let mapping = plan.mapping
            entityNumber = Int64(mapping.number)
            table = mapping.tableName
            scope = writer.identities.scope(of: mapping.tableName)
            entityNumbers = Dictionary(writer.schema.entities.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
            entityTables = Dictionary(writer.schema.entities.map { ($0.name, $0.tableName) }, uniquingKeysWith: { a, _ in a })
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
            for stored in plan.attributes {
                columns.append(stored.column)
                attributeBindings.append(
                    AttributeBinding(
                        cell: stored.position, parameter: Int32(columns.count),
                        asReal: [.double, .float, .date].contains(stored.attribute.type),
                        external: stored.attribute.allowsExternalBinaryDataStorage))
            }
            for composite in plan.composites {
                var elements: [(name: String, type: AttributeType, parameter: Int32)] = []
                for element in composite.elements {
                    columns.append(element.column)
                    elements.append((element.element.name, element.element.type, Int32(columns.count)))
                }
                compositeBindings.append(CompositeBinding(cell: composite.position, elements: elements))
            }
            let attributeCount = layout.attributes.count
            var targets: [(cell: Int, target: MemberTarget)] = []
            var toOnes: [ToOneBinding] = []
            var links: [JoinRows] = []
            try writer.connection.inDatabase { db in
                for relationship in plan.relationships {
                    let cell = attributeCount + relationship.position
                    switch relationship.storage {
                    case .toOne(let key)?:
                        columns.append(key.column)
                        let parameter = Int32(columns.count)
                        var entityParameter: Int32?
                        if let entityColumn = key.entityColumn {
                            columns.append(entityColumn)
                            entityParameter = Int32(columns.count)
                        }
                        let target = writer.identities.register(.toOne(table: mapping.tableName, column: key.column))
                        toOnes.append(
                            ToOneBinding(
                                cell: cell, parameter: parameter, entityParameter: entityParameter, target: target))
                    case .manyToMany(let link)?:
                        links.append(try JoinRows(db, link: link))
                        targets.append(
                            (
                                cell,
                                .joinTable(links: links.count - 1, target: writer.identities.register(.joinTable(link)))
                            ))
                    case .toManyThroughInverse(let key)? where key.orderColumn != nil:
                        // The order of an ordered one-to-many lives on the members, which may not be written yet:
                        // staged like a hidden key and applied in finish().
                        let id = writer.registerStagedKey(key)
                        targets.append((cell, .hiddenKey(id: id, target: writer.identities.register(.hiddenKey(id: id)))))
                    case .toManyThroughHiddenKey(let key)?:
                        // The members may not be written yet: stage the links, apply them in finish().
                        let id = writer.registerStagedKey(key)
                        targets.append((cell, .hiddenKey(id: id, target: writer.identities.register(.hiddenKey(id: id)))))
                    default:
                        break
                    }
                }
            }
            toOneBindings = toOnes
            memberTargets = targets
            joinRows = links
            let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            let prefix = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
            let chunk = max(1, min(64, 30_000 / columns.count))
            self.chunk = chunk
            self.parameterCount = Int32(columns.count)
            (insertOne, insertChunk) = try writer.connection.inDatabase { db in
                (
                    try db.makeStatement(sql: prefix + tuple),
                    try db.makeStatement(sql: prefix + Array(repeating: tuple, count: chunk).joined(separator: ", "))
                )
            }
        }

        /// Inserts the join rows still pending (before another entity's rows, and before the store is completed).
        func flushJoinRows(_ db: Database) throws {
            for rows in joinRows { try rows.flush(db) }
        }

        func insert(_ batch: RecordBatch, db: Database) throws {
            // Hot path: statements were prepared once through GRDB; binding and stepping use the SQLite handles
            // directly, rows go in `chunk` at a time, and text and bytes are bound straight from the batch's buffer
            // without a copy (no String, no Data): SQLite reads them during the step, and the statement is reset
            // right after it.
            let width = batch.width
            var maxKey: Int64 = 0
            // Keys for external ids are taken from the table's counter, kept in a local while the batch goes in.
            var lastKey = writer.maxKeys[table] ?? 0
            defer { writer.noteKey(lastKey, table: table) }
            var keys = [Int64](repeating: 0, count: chunk)  // the current chunk's primary keys
            defer {
                sqlite3_clear_bindings(insertOne.sqliteStatement)
                sqlite3_clear_bindings(insertChunk.sqliteStatement)
            }
            // Per entity index of the batch: the destination's scope of external ids, and its entity number.
            let scopes = batch.entityNames.map { writer.identities.scope(of: entityTables[$0] ?? "") }
            let numbers = batch.entityNames.map { Int64(entityNumbers[$0] ?? 0) }
            let references = References(scopes: scopes, numbers: numbers)
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.bytes.withUnsafeBytes { arena in
                    var row = 0
                    while row < batch.count {
                        let count = batch.count - row >= chunk ? chunk : 1
                        let handle = count == 1 ? insertOne.sqliteStatement : insertChunk.sqliteStatement
                        for offset in 0..<count {
                            let first = Int32(offset) * parameterCount
                            let identity = batch.identities[row + offset]
                            let key: Int64
                            if identity.kind == .integer {
                                key = identity.integer
                            } else {
                                lastKey += 1
                                key = lastKey
                                if !batch.isAnonymous(at: row + offset) {
                                    try writer.identities.stageObject(
                                        name: Self.text(of: identity, in: arena), scope: scope, key: key, db: db)
                                }
                            }
                            keys[offset] = key
                            maxKey = max(maxKey, key)
                            sqlite3_bind_int64(handle, first + 1, key)
                            sqlite3_bind_int64(handle, first + 2, entityNumber)
                            sqlite3_bind_int64(handle, first + 3, 1)
                            let base = (row + offset) * width
                            for binding in attributeBindings {
                                bind(cells[base + binding.cell], binding, first: first, to: handle, arena: arena)
                            }
                            for binding in compositeBindings {
                                bindComposite(cells[base + binding.cell], binding, first: first, to: handle, arena: arena)
                            }
                            for binding in toOneBindings {
                                try bindReference(
                                    cells[base + binding.cell], binding: binding, owner: key, first: first,
                                    handle: handle, arena: arena, references: references, db: db)
                            }
                        }
                        #if DEBUG
                            // Fault injection for the tests of the check that catches it (docs/TESTING.md): one
                            // chunk of objects is bound and never stepped, as a writer's defect would drop them.
                            if Self.dropsObjectsForTesting, !writer.droppedForTesting {
                                writer.droppedForTesting = true
                                sqlite3_reset(handle)
                                row += count
                                continue
                            }
                        #endif
                        let code = sqlite3_step(handle)
                        stored += Int(sqlite3_changes(db.sqliteConnection))
                        sqlite3_reset(handle)
                        guard code == SQLITE_DONE else {
                            let objects = count == 1
                                ? "\(batch.layout.entityName)/\(batch.id(at: row))"
                                : "\(batch.layout.entityName)/\(batch.id(at: row))…\(batch.id(at: row + count - 1))"
                            throw DecantError(
                                .malformedInput, "cannot insert: \(String(cString: sqlite3_errmsg(db.sqliteConnection)))",
                                at: Location(path: writer.displayPath, entity: batch.layout.entityName, object: objects))
                        }
                        if !memberTargets.isEmpty {
                            for offset in 0..<count {
                                try writeMembers(
                                    row: row + offset, key: keys[offset], batch: batch, arena: arena,
                                    references: references, db: db)
                            }
                        }
                        row += count
                    }
                }
            }
            writer.noteKey(maxKey, table: table)
        }

        private func bind(
            _ cell: RecordBatch.Cell, _ binding: AttributeBinding, first: Int32, to handle: OpaquePointer,
            arena: UnsafeRawBufferPointer
        ) {
            let parameter = first + binding.parameter
            switch cell.kind {
            case .integer:
                if binding.asReal {
                    sqlite3_bind_double(handle, parameter, Double(cell.integer))
                } else {
                    sqlite3_bind_int64(handle, parameter, cell.integer)
                }
            case .real:
                sqlite3_bind_double(handle, parameter, Double(bitPattern: UInt64(bitPattern: cell.integer)))
            case .text:
                let start = arena.baseAddress.map { $0 + Int(cell.integer) }
                sqlite3_bind_text(handle, parameter, start?.assumingMemoryBound(to: CChar.self), cell.length, nil)
            case .blob where binding.external:
                // Stored inline with the 0x01 tag, as Core Data does for values it keeps in the database.
                let bytes = UnsafeRawBufferPointer(
                    rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
                let tagged = ExternalBinaryValue.inlineValue(bytes)
                sqlite3_bind_blob(handle, parameter, tagged, Int32(tagged.count), sqliteTransient)
            case .externalDataReference where binding.external:
                // A missing external file kept as a reference (--missing-external-data keep): the same reference.
                let name = String(
                    decoding: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)], as: UTF8.self)
                let tagged = ExternalBinaryValue.fileValue(name)
                sqlite3_bind_blob(handle, parameter, tagged, Int32(tagged.count), sqliteTransient)
            case .blob:
                let start = arena.baseAddress.map { $0 + Int(cell.integer) }
                sqlite3_bind_blob(handle, parameter, start, cell.length, nil)
            default:
                sqlite3_bind_null(handle, parameter)
            }
        }

        /// Binds a composite's elements to their columns: each element's value from the cell's dictionary, null
        /// for an element it lacks, and every element null for a nil composite.
        private func bindComposite(
            _ cell: RecordBatch.Cell, _ binding: CompositeBinding, first: Int32, to handle: OpaquePointer,
            arena: UnsafeRawBufferPointer
        ) {
            var elements: [String: Value] = [:]
            if cell.kind == .blob {
                let bytes = UnsafeRawBufferPointer(rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
                elements = CompositeValueCoding.decode(bytes) ?? [:]
            }
            for element in binding.elements {
                let parameter = first + element.parameter
                let isReal = [.double, .float, .date].contains(element.type)
                switch elements[element.name] ?? .null {
                case .null, .composite:
                    sqlite3_bind_null(handle, parameter)
                case .integer(let integer):
                    if isReal { sqlite3_bind_double(handle, parameter, Double(integer)) } else {
                        sqlite3_bind_int64(handle, parameter, integer)
                    }
                case .bool(let flag):
                    sqlite3_bind_int64(handle, parameter, flag ? 1 : 0)
                case .double(let real):
                    if !isReal, real.rounded() == real, abs(real) < 9.2e18 {
                        sqlite3_bind_int64(handle, parameter, Int64(real))
                    } else {
                        sqlite3_bind_double(handle, parameter, real)
                    }
                case .decimal(let decimal):
                    sqlite3_bind_double(handle, parameter, NSDecimalNumber(decimal: decimal).doubleValue)
                case .date(let date):
                    sqlite3_bind_double(handle, parameter, date.timeIntervalSinceReferenceDate)
                case .string(let text), .uri(let text), .externalDataReference(let text):
                    sqlite3_bind_text(handle, parameter, text, -1, sqliteTransient)
                case .data(let data), .transformable(let data):
                    if data.isEmpty {
                        sqlite3_bind_zeroblob(handle, parameter, 0)
                    } else {
                        data.withUnsafeBytes { _ = sqlite3_bind_blob(handle, parameter, $0.baseAddress, Int32($0.count), sqliteTransient) }
                    }
                case .uuid(let uuid):
                    withUnsafeBytes(of: uuid.uuid) {
                        _ = sqlite3_bind_blob(handle, parameter, $0.baseAddress, 16, sqliteTransient)
                    }
                }
            }
        }

        /// Per entity index of a batch: the scope of its external ids and its entity number.
        struct References {
            var scopes: [Int64]
            var numbers: [Int64]
        }

        /// The UTF-8 bytes of a text cell (an external id).
        private static func text(of cell: RecordBatch.Cell, in arena: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
        }

        /// Where a reference cell points: a key, or an external id to stage (with its scope); and the destination's
        /// entity number. Nil for a cell that holds no reference.
        private func destination(
            of cell: RecordBatch.Cell, arena: UnsafeRawBufferPointer, references: References
        ) -> (key: Int64?, name: UnsafeRawBufferPointer, scope: Int64, entity: Int64)? {
            switch cell.kind {
            case .reference:
                return (cell.integer, UnsafeRawBufferPointer(start: nil, count: 0), 0, references.numbers[Int(cell.length)])
            case .externalReference:
                let name = Self.text(of: cell, in: arena)
                let scope = references.scopes[Int(cell.entity)]
                return (writer.identities.knownKey(name: name, scope: scope), name, scope, references.numbers[Int(cell.entity)])
            default:
                return nil
            }
        }

        private func bindReference(
            _ cell: RecordBatch.Cell, binding: ToOneBinding, owner: Int64, first: Int32, handle: OpaquePointer,
            arena: UnsafeRawBufferPointer, references: References, db: Database
        ) throws {
            guard let destination = destination(of: cell, arena: arena, references: references) else {
                sqlite3_bind_null(handle, first + binding.parameter)
                if let entityParameter = binding.entityParameter { sqlite3_bind_null(handle, first + entityParameter) }
                return
            }
            if let key = destination.key {
                sqlite3_bind_int64(handle, first + binding.parameter, key)
            } else {
                // Filled in finish(), once every id is known.
                sqlite3_bind_null(handle, first + binding.parameter)
                try writer.identities.stageReference(
                    target: binding.target, owner: owner, name: destination.name, scope: destination.scope, entity: 0,
                    position: 0, db: db)
            }
            if let entityParameter = binding.entityParameter {
                sqlite3_bind_int64(handle, first + entityParameter, destination.entity)
            }
        }

        private func writeMembers(
            row: Int, key: Int64, batch: RecordBatch, arena: UnsafeRawBufferPointer, references: References,
            db: Database
        ) throws {
            for (cellIndex, target) in memberTargets {
                let cell = batch.cell(row: row, column: cellIndex)
                guard cell.kind == .referenceList else { continue }
                let members = batch.references[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)]
                for (position, member) in members.enumerated() {
                    guard let destination = destination(of: member, arena: arena, references: references) else {
                        continue
                    }
                    guard let memberKey = destination.key else {
                        let staged: Int
                        switch target {
                        case .joinTable(_, let target): staged = target
                        case .hiddenKey(_, let target): staged = target
                        }
                        try writer.identities.stageReference(
                            target: staged, owner: key, name: destination.name, scope: destination.scope,
                            entity: entityNumber, position: Int64(position + 1), db: db)
                        continue
                    }
                    switch target {
                    case .joinTable(let links, _):
                        try joinRows[links].append(owner: key, member: memberKey, position: position + 1, db: db)
                    case .hiddenKey(let id, _):
                        try writer.stageHiddenKey(
                            id: id, owner: key, ownerEntity: entityNumber, member: memberKey, position: position + 1, db: db)
                    }
                }
            }
        }
    }
}
