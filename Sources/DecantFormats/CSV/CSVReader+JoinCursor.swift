import DecantCore
import DecantCodecs
import Foundation

extension CSVReader {
    /// The open join file of one to-many relationship, read alongside its owners' file.
    final class JoinCursor {
        let input: JoinInput
        let owner: String
        let relationship: Relationship
        let tokenizer: CSVTokenizer
        unowned let reader: CSVReader
        let width: Int
        /// The row read last and not yet given to its owner (the tokenizer's current record).
        var pending: (owner: RecordID, member: ObjectReference, position: Int64?, line: Int)?
        var exhausted = false
        /// How owners are identified (looked up once, not per row).
        let ownerMode: CSVIdentities.Mode
        /// The member each text read so far names, by the field's bytes (each noted once, when first read).
        var knownMembers = ByteStringTable<ObjectReference>()
        /// The members of the current owner (reused from owner to owner), and their positions when ordered.
        var list: [ObjectReference] = []
        var rows: [(position: Int64, index: Int, member: ObjectReference)] = []
        /// Whether members are sorted by a position column.
        let sorted: Bool

        init(input: JoinInput, owner: String, relationship: Relationship, reader: CSVReader) throws {
            self.input = input
            self.owner = owner
            self.relationship = relationship
            self.reader = reader
            ownerMode = reader.identities.mode(of: owner)
            sorted = input.columns.position != nil && relationship.isOrdered
            tokenizer = try CSVTokenizer(
                url: input.url, path: input.path, entity: owner, delimiter: reader.dialect.delimiter)
            width = try tokenizer.nextRecord() ? tokenizer.fields.count : 0
            exhausted = width == 0
        }

        func close() { tokenizer.close() }

        /// The members of `id`: the rows at the cursor whose owner it is, in position order.
        func members(of id: RecordID) throws -> [ObjectReference] {
            list.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
            while true {
                if pending == nil {
                    guard try readRow() else { break }
                }
                guard let row = pending, row.owner == id else { break }
                if sorted {
                    rows.append((row.position ?? .max, rows.count, row.member))
                } else {
                    list.append(row.member)
                }
                pending = nil
            }
            if sorted {
                rows.sort { ($0.position, $0.index) < ($1.position, $1.index) }
                list.append(contentsOf: rows.lazy.map(\.member))
            }
            return list
        }

        /// Checks that no row is left: a row left over belongs to no object of the entity file, or is out of order.
        func finish() throws {
            if pending == nil { _ = try readRow() }
            guard let row = pending else { return }
            // The pending row is the tokenizer's current record.
            let text = CSVValueText.trimmingSpaces(tokenizer.text(input.columns.owner))
            throw DecantError(
                .malformedInput,
                "owner \(text.debugDescription) is not an object of \(owner).csv, or this file's rows are not "
                    + "grouped by owner in the order of \(owner).csv",
                at: Location(path: input.path, line: row.line, entity: owner, keyPath: relationship.name))
        }

        private func readRow() throws -> Bool {
            guard !exhausted else { return false }
            guard try tokenizer.nextRecord() else {
                exhausted = true
                return false
            }
            let line = tokenizer.recordLine
            guard tokenizer.fields.count == width else {
                throw DecantError(
                    .malformedInput, "expected \(width) fields, as in the header, found \(tokenizer.fields.count)",
                    at: Location(path: input.path, line: line, entity: owner, keyPath: relationship.name))
            }
            let columns = input.columns
            let ownerID: RecordID
            if let plain = tokenizer.withBytes(columns.owner, { CSVIdentities.plainID($0, mode: ownerMode) }) {
                ownerID = plain
            } else {
                let ownerText = CSVValueText.trimmingSpaces(tokenizer.text(columns.owner))
                ownerID = try reader.identities.id(of: owner, text: ownerText, at: location(columns.owner))
            }
            let member: ObjectReference
            if let known = tokenizer.withBytes(columns.member, { knownMembers.value(for: $0) }) {
                // Read and noted before (a second note changes nothing).
                member = known
            } else {
                let memberText = CSVValueText.trimmingSpaces(tokenizer.text(columns.member))
                guard !memberText.isEmpty else {
                    throw DecantError(.malformedInput, "an empty member", at: location(columns.member))
                }
                member = try reader.identities.reference(
                    memberText, through: relationship, of: owner, at: location(columns.member))
                reader.noteMember(member, at: location(columns.member))
                if CSVReader.remembersMore(knownMembers) {
                    tokenizer.withBytes(columns.member) { knownMembers.insert(member, for: $0) }
                }
            }
            var position: Int64?
            if let column = columns.position {
                let text = CSVValueText.trimmingSpaces(tokenizer.text(column))
                if !text.isEmpty {
                    guard let value = Int64(text) else {
                        throw DecantError(
                            .malformedInput, "expected an integer position, found \(text.debugDescription)",
                            at: location(column))
                    }
                    position = value
                }
            }
            pending = (ownerID, member, position, line)
            return true
        }

        private func location(_ column: Int) -> Location {
            var location = tokenizer.location(ofField: column)
            location.keyPath = relationship.name
            return location
        }
    }
}
