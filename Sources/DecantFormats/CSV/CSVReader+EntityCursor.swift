import DecantCore
import DecantCodecs
import Foundation

extension CSVReader {
    /// The open entity file and its join files.
    final class EntityCursor {
        let input: EntityInput
        let tokenizer: CSVTokenizer
        /// Per layout relationship, its join file's cursor.
        let joins: [Int: JoinCursor]
        unowned let reader: CSVReader
        let entity: Entity?
        /// Per layout attribute without a column: its default value.
        let defaults: [Int: Value]
        let width: Int
        var exhausted = false
        /// Per layout attribute: its type, and whether a field of that type is the value's text.
        let types: [AttributeType]
        let textual: [Bool]
        /// Whether records identified by their key start anonymous (``CSVReader/isUnreferencedStoreKey(_:of:)``).
        let keysUnreferenced: Bool
        /// How the file identifies its objects, and the column of the key (looked up once, not per row).
        let mode: CSVIdentities.Mode
        let keyColumn: Int?
        /// Whether the reader notes this entity's objects (``CSVReader/memberEntities``).
        let notesObjects: Bool
        /// Per layout relationship: where its value comes from.
        let sources: [RelationshipSource]
        /// Per layout relationship with a column: the reference each text read so far names, by the field's bytes.
        var references: [ByteStringTable<ObjectReference>]

        /// Where one relationship's value comes from.
        enum RelationshipSource {
            case column(Int)
            case join(JoinCursor)
            case viaInverse
            case empty
            case null
        }

        init(input: EntityInput, reader: CSVReader) throws {
            self.input = input
            self.reader = reader
            types = input.layout.attributes.map(\.type)
            textual = types.map(CSVValueText.isTextual)
            self.entity = reader.model.entity(named: input.layout.entityName)
            let name = input.layout.entityName
            mode = reader.identities.mode(of: name)
            if case .key(let key) = mode {
                keysUnreferenced = reader.isUnreferencedStoreKey(key, of: name)
                keyColumn = input.layout.attributeIndex(key.name).flatMap { input.columns.attributeColumns[$0] }
            } else {
                keysUnreferenced = false
                keyColumn = nil
            }
            tokenizer = try CSVTokenizer(
                url: input.url, path: input.path, entity: name, delimiter: reader.dialect.delimiter)
            width = try tokenizer.nextRecord() ? tokenizer.fields.count : 0
            var joins: [Int: JoinCursor] = [:]
            for (position, join) in input.joins {
                joins[position] = try JoinCursor(
                    input: join, owner: name, relationship: input.layout.relationships[position], reader: reader)
            }
            self.joins = joins
            notesObjects = reader.memberEntities.contains(name)
            sources = input.layout.relationships.indices.map { index in
                if let column = input.columns.relationshipColumns[index] { return .column(column) }
                if let join = joins[index] { return .join(join) }
                guard input.layout.relationships[index].isToMany else { return .null }
                if case .viaInverse = input.unlisted[index] ?? .toMany([]) { return .viaInverse }
                return .empty
            }
            references = input.layout.relationships.map { _ in ByteStringTable() }
            var defaults: [Int: Value] = [:]
            for (index, attribute) in input.layout.attributes.enumerated()
            where input.columns.attributeColumns[index] == nil {
                // The model's default as the model parsed it (``Attribute/defaultLiteral``), as inference and the
                // compiled model see it.
                if let value = attribute.defaultLiteral { defaults[index] = value }
            }
            self.defaults = defaults
        }

        /// Appends up to `limit` records; returns whether records may remain.
        func fill(_ batch: inout RecordBatch, limit: Int) throws -> Bool {
            guard !exhausted, width > 0 else { return false }
            let layout = input.layout
            let name = layout.entityName
            while batch.count < limit {
                guard try tokenizer.nextRecord() else {
                    exhausted = true
                    return false
                }
                let line = tokenizer.recordLine
                guard tokenizer.fields.count == width else {
                    throw DecantError(
                        .malformedInput,
                        "expected \(width) fields, as in the header (\(input.columns.names.joined(separator: ", "))), "
                            + "found \(tokenizer.fields.count)",
                        at: Location(path: input.path, line: line, entity: name))
                }
                if entity?.isAbstract == true {
                    throw DecantError(
                        .malformedInput,
                        "\(name) is abstract: its objects belong in the files of its sub-entities",
                        at: Location(path: input.path, line: line, entity: name))
                }
                let (id, anonymous) = try identity(line: line)
                if notesObjects { reader.noteObject(ObjectReference(entity: name, id: id)) }
                if anonymous, case .external(let text) = id {
                    batch.beginRecord(anonymous: text)
                } else {
                    batch.beginRecord(id: id)
                }
                for index in 0..<types.count {
                    guard let column = input.columns.attributeColumns[index] else {
                        batch.append(defaults[index] ?? .null, as: types[index])
                        continue
                    }
                    try appendAttribute(index, column: column, id: id, to: &batch)
                }
                if layout.relationships.isEmpty {
                    batch.endRecord()
                    continue
                }
                for (index, source) in sources.enumerated() {
                    switch source {
                    case .column(let column):
                        if isNil(column, textual: false) {
                            batch.appendNull()
                        } else {
                            batch.appendReference(try reference(index, column: column, id: id))
                        }
                    case .join(let join):
                        batch.appendReferenceList(try join.members(of: id))
                    case .viaInverse:
                        batch.appendViaInverse()
                    case .empty:
                        batch.appendReferenceList([])
                    case .null:
                        batch.appendNull()
                    }
                }
                batch.endRecord()
            }
            return true
        }

        /// Checks that every join file was read to its end, then closes the files.
        func finish() throws {
            defer {
                tokenizer.close()
                for join in joins.values { join.close() }
            }
            for position in joins.keys.sorted() { try joins[position]?.finish() }
        }

        /// The object the (non-nil) field `column` of relationship `index` names: a text read before names the
        /// object it named then (looked up by the field's bytes, no String made), any other is read by
        /// ``CSVIdentities/reference(_:through:of:at:)`` and remembered (``CSVReader/remembersMore(_:)``).
        private func reference(_ index: Int, column: Int, id: RecordID) throws -> ObjectReference {
            if let known = tokenizer.withBytes(column, { references[index].value(for: $0) }) { return known }
            let relationship = input.layout.relationships[index]
            // The location is built only for an error: per row, it cost more than the reference.
            let text = CSVValueText.trimmingSpaces(tokenizer.text(column))
            let reference = try reader.identities.reference(
                text, through: relationship, of: input.layout.entityName,
                at: objectLocation(column, id: id, keyPath: relationship.name))
            if CSVReader.remembersMore(references[index]) {
                tokenizer.withBytes(column) { references[index].insert(reference, for: $0) }
            }
            return reference
        }

        /// The identity of the current record, and whether nothing can refer to it (an id from its line).
        private func identity(line: Int) throws -> (id: RecordID, anonymous: Bool) {
            let name = input.layout.entityName
            switch mode {
            case .explicit:
                guard let column = input.columns.idColumn else { return (.external("\(name):\(line)"), true) }
                if let key = tokenizer.withBytes(column, CSVIdentities.primaryKey) { return (.primaryKey(key), false) }
                let id = try reader.identities.id(
                    of: name, text: CSVValueText.trimmingSpaces(tokenizer.text(column)),
                    at: tokenizerLocation(column, keyPath: CSVColumns.idHeader))
                return (id, false)
            case .key(let attribute):
                guard let column = keyColumn, !isNil(column, textual: CSVValueText.isTextual(attribute.type))
                else { return (.external("\(name):\(line)"), true) }
                if let id = tokenizer.withBytes(column, { CSVIdentities.plainID($0, mode: mode) }) {
                    return (id, keysUnreferenced)
                }
                let id = try reader.identities.id(
                    of: name, text: tokenizer.text(column), at: tokenizerLocation(column, keyPath: attribute.name))
                return (id, keysUnreferenced)
            case .implicit:
                return (.external("\(name):\(line)"), true)
            }
        }

        /// An integer written as decimal digits with an optional minus sign (at most 18 digits, so it fits), read
        /// from its bytes; nil for anything else, which then takes the general path.
        private static func plainInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
            var index = 0
            let negative = bytes.first == UInt8(ascii: "-")
            if negative { index = 1 }
            guard bytes.count > index, bytes.count - index <= 18 else { return nil }
            var value: Int64 = 0
            while index < bytes.count {
                let byte = bytes[index]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
                index += 1
            }
            return negative ? -value : value
        }

        /// A field of a non-textual type read straight from its bytes where it has the one plain spelling the
        /// writer gives it: digits for integers, `true`/`false`, an ISO 8601 date; nil for anything else.
        private static func fastParsed(
            _ bytes: UnsafeRawBufferPointer, as type: AttributeType
        ) -> CSVValueText.Parsed? {
            switch type {
            case .integer16, .integer32, .integer64:
                return plainInteger(bytes).map(CSVValueText.Parsed.integer)
            case .boolean:
                if bytes.elementsEqual("true".utf8) { return .integer(1) }
                if bytes.elementsEqual("false".utf8) { return .integer(0) }
                return plainInteger(bytes).map(CSVValueText.Parsed.integer)
            case .date:
                // What parseDate reads as ISO 8601: at least ten bytes with dashes at 4 and 7, nothing to trim.
                guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                    let first = bytes.first, first != 0x20, first != 0x09, let last = bytes.last, last != 0x20,
                    last != 0x09,
                    case .success(let seconds) = ExactDate.referenceSeconds(isoUTF8: bytes)
                else { return nil }
                return .real(seconds)
            default:
                return nil
            }
        }

        /// Where field `column` of object `id` is, for the property `keyPath`.
        private func objectLocation(_ column: Int, id: RecordID, keyPath: String) -> Location {
            var location = tokenizer.location(ofField: column)
            location.object = "\(input.layout.entityName)/\(id)"
            location.keyPath = keyPath
            return location
        }

        private func tokenizerLocation(_ column: Int, keyPath: String) -> Location {
            var location = tokenizer.location(ofField: column)
            location.keyPath = keyPath
            return location
        }

        /// Whether field `column` is nil: the null marker unquoted; else an empty field, unquoted or (for columns
        /// that are not text) quoted.
        private func isNil(_ column: Int, textual: Bool) -> Bool {
            let field = tokenizer.fields[column]
            let empty = field.start == field.end
            if let marker = reader.dialect.nullMarker {
                if !field.quoted && !empty {
                    return tokenizer.withBytes(column) { $0.elementsEqual(marker.utf8) }
                }
                return empty && !textual
            }
            return empty && (!field.quoted || !textual)
        }

        private func appendAttribute(
            _ index: Int, column: Int, id: RecordID, to batch: inout RecordBatch
        ) throws {
            let type = types[index]
            if isNil(column, textual: textual[index]) {
                return batch.appendNull()
            }
            switch type {
            case .string, .uri, .undefined, .objectID, .composite:
                tokenizer.withBytes(column) { batch.appendText(utf8: $0) }
            case .integer16, .integer32, .integer64, .boolean, .date:
                if let value = tokenizer.withBytes(column, { Self.fastParsed($0, as: type) }) {
                    return value.append(to: &batch)
                }
                try appendParsed(index, column: column, id: id, to: &batch)
            default:
                try appendParsed(index, column: column, id: id, to: &batch)
            }
        }

        /// Appends a field of a non-textual type parsed from its text.
        private func appendParsed(_ index: Int, column: Int, id: RecordID, to batch: inout RecordBatch) throws {
            let type = types[index]
            let text = tokenizer.text(column)
            guard let value = CSVValueText.parse(text, as: type) else {
                let attribute = input.layout.attributes[index]
                var location = tokenizer.location(ofField: column)
                location.object = "\(input.layout.entityName)/\(id)"
                location.keyPath = attribute.name
                let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
                throw DecantError(
                    .malformedInput,
                    "expected \(CSVValueText.expectation(for: type)) for \(type.modelName) attribute "
                        + "\(attribute.name), found \(shown.debugDescription)", at: location)
            }
            value.append(to: &batch)
        }
    }
}
