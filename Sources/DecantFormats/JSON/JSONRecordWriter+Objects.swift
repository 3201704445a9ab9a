import DecantCore
import DecantCodecs
import Foundation

extension JSONRecordWriter {
    // MARK: Objects

    /// The JSON bytes of an entity's objects that are the same in every object: the start of `"@id"` up to the
    /// entity name and its slash, and per property `,"name":`.
    struct ObjectSpelling {
        var idPrefix: [UInt8]
        var attributeKeys: [[UInt8]]
        var attributeTypes: [AttributeType]
        var relationshipKeys: [[UInt8]]
        var relationshipIsToMany: [Bool]

        init(layout: RecordLayout) {
            func key(_ name: String) -> [UInt8] {
                var output = JSONOutput()
                output.append(",")
                output.appendString(name)
                output.append(":")
                return output.bytes
            }
            var prefix = JSONOutput()
            prefix.append("{\"@id\":")
            prefix.appendString(layout.entityName + "/")
            prefix.bytes.removeLast()  // the closing quote: the id follows
            idPrefix = prefix.bytes
            attributeKeys = layout.attributes.map { key($0.name) }
            attributeTypes = layout.attributes.map(\.type)
            relationshipKeys = layout.relationships.map { key($0.name) }
            relationshipIsToMany = layout.relationships.map(\.isToMany)
        }
    }

    /// The JSON bytes that start a reference by primary key to each entity of a batch's ``RecordBatch/entityNames``:
    /// the opening quote, the escaped name and its slash (`"Folder/`); `p`, the key and the closing quote follow.
    struct ReferenceSpelling {
        var entityNames: [String] = []
        var prefixes: [[UInt8]] = []

        init() {}

        init(entityNames: [String]) {
            self.entityNames = entityNames
            prefixes = entityNames.map { name in
                var prefix = JSONOutput()
                prefix.appendString(name + "/")
                prefix.bytes.removeLast()  // the closing quote: the id follows
                return prefix.bytes
            }
        }

        /// Appends `"Entity/p12"` for a reference cell by primary key, else the string of its
        /// ``ObjectReference/description``.
        @inline(__always)
        func append(_ cell: RecordBatch.Cell, of batch: RecordBatch, to output: inout JSONOutput) {
            let index = Int(cell.length)
            guard cell.kind == .reference, prefixes.indices.contains(index) else {
                return output.appendString(batch.reference(of: cell).description)
            }
            output.bytes.append(contentsOf: prefixes[index])
            output.bytes.append(UInt8(ascii: "p"))
            output.bytes.appendDecimal(cell.integer)
            output.bytes.append(UInt8(ascii: "\""))
        }
    }

    /// The reference spelling of `batch`'s entity names, kept while batches come with the same names.
    func referenceSpelling(for batch: RecordBatch) -> ReferenceSpelling {
        if currentReferenceSpelling.entityNames != batch.entityNames {
            currentReferenceSpelling = ReferenceSpelling(entityNames: batch.entityNames)
        }
        return currentReferenceSpelling
    }

    func spelling(for layout: RecordLayout) -> ObjectSpelling {
        if let spelling = spellings[layout.entityName] { return spelling }
        let spelling = ObjectSpelling(layout: layout)
        spellings[layout.entityName] = spelling
        return spelling
    }

    static func appendObject(
        row: Int, of batch: RecordBatch, plan: EntityPlan, spelling: ObjectSpelling, references: ReferenceSpelling,
        to output: inout JSONOutput, cuts: inout [ListCut], decodesTransformables: Bool, kept: inout KeptArchives
    ) throws {
        let layout = plan.layout
        // `"Entity/p12"` or `"Entity/<external id>"`, spelled as `Entity/\(RecordID)` is.
        output.bytes.append(contentsOf: spelling.idPrefix)
        let identity = batch.identities[row]
        if identity.kind == .integer {
            output.bytes.append(UInt8(ascii: "p"))
            output.appendInteger(identity.integer)
            output.bytes.append(UInt8(ascii: "\""))
        } else {
            // The external id's text, escaped, straight from the batch (no String, no buffer of its own); its
            // opening quote goes, the prefix has one.
            let start = output.bytes.count
            batch.withBytes(of: identity) { output.appendString(raw: $0) }
            output.bytes.remove(at: start)
        }
        let width = batch.width
        let attributeCount = layout.attributes.count
        let first = row * width
        for index in 0..<attributeCount {
            output.bytes.append(contentsOf: spelling.attributeKeys[index])
            let cell = batch.cells[first + index]
            if decodesTransformables, spelling.attributeTypes[index] == .transformable, cell.kind == .blob {
                let data = batch.withBytes(of: cell) { Data($0) }
                do throws(FoundationValue.Refusal) {
                    ArchivedJSON.append(try FoundationValue(archivedData: data), to: &output)
                    kept.decoded(entity: layout.entityName, attribute: layout.attributes[index].name)
                    continue
                } catch {
                    kept.keep(
                        entity: layout.entityName, attribute: layout.attributes[index].name,
                        object: "\(layout.entityName)/\(batch.id(at: row))", because: error)
                }
            }
            do {
                try appendAttribute(cell, of: batch, type: spelling.attributeTypes[index], to: &output)
            } catch {
                // The value came from the input, whose path the writer does not know: the place is the object.
                let attribute = layout.attributes[index]
                throw DecantError(
                    .malformedInput, "the \(attribute.type.modelName) attribute \(attribute.name) holds \(error.problem)",
                    at: Location(
                        entity: layout.entityName, object: "\(layout.entityName)/\(batch.id(at: row))",
                        keyPath: attribute.name))
            }
        }
        guard !layout.relationships.isEmpty else { return output.append("}") }
        for index in spelling.relationshipKeys.indices {
            let cell = batch.cells[first + attributeCount + index]
            if cell.kind == .viaInverse { continue }
            output.bytes.append(contentsOf: spelling.relationshipKeys[index])
            switch cell.kind {
            case .reference, .externalReference:
                if spelling.relationshipIsToMany[index] {
                    output.append("[")
                    references.append(cell, of: batch, to: &output)
                    output.append("]")
                } else {
                    references.append(cell, of: batch, to: &output)
                }
            case .referenceList:
                let start = Int(cell.integer)
                let members = batch.references[start..<start + Int(cell.length)]
                if spelling.relationshipIsToMany[index] {
                    appendMembers(
                        members, of: batch, references: references, continued: batch.isContinued(cell), to: &output,
                        cuts: &cuts)
                } else if let first = members.first, members.count == 1 {
                    references.append(first, of: batch, to: &output)
                } else if members.isEmpty {
                    output.append("null")
                } else {
                    let relationship = layout.relationships[index]
                    throw DecantError(
                        .malformedInput, "the to-one relationship \(relationship.name) holds \(members.count) objects",
                        at: Location(
                            entity: layout.entityName, object: "\(layout.entityName)/\(batch.id(at: row))",
                            keyPath: relationship.name))
                }
            default:
                output.append(spelling.relationshipIsToMany[index] ? "[]" : "null")
            }
        }
        output.append("}")
    }

    /// Appends a to-many list; for one `continued` in further parts, notes where its `]` is in `cuts`.
    private static func appendMembers(
        _ members: ArraySlice<RecordBatch.Cell>, of batch: RecordBatch, references: ReferenceSpelling, continued: Bool,
        to output: inout JSONOutput, cuts: inout [ListCut]
    ) {
        output.append("[")
        for (position, member) in members.enumerated() {
            if position > 0 { output.append(",") }
            references.append(member, of: batch, to: &output)
        }
        if continued { cuts.append(ListCut(offset: output.bytes.count, members: members.count)) }
        output.append("]")
    }

    /// A value an attribute's type cannot have: what it is.
    struct Mismatch: Error {
        var problem: String
    }

    /// Appends one attribute value.
    private static func appendAttribute(
        _ cell: RecordBatch.Cell, of batch: RecordBatch, type: AttributeType, to output: inout JSONOutput
    ) throws(Mismatch) {
        if cell.kind == .null {
            output.append("null")
            return
        }
        let real = Double(bitPattern: UInt64(bitPattern: cell.integer))
        switch (type, cell.kind) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer):
            output.appendInteger(cell.integer)
        case (.integer16, .real), (.integer32, .real), (.integer64, .real):
            // A whole number stored as a real reads as that integer.
            guard real.rounded() == real, real.magnitude < 9.2e18 else { throw Mismatch(problem: "the fraction \(real)") }
            output.appendInteger(Int64(real))
        case (.boolean, .integer):
            output.append(cell.integer != 0 ? "true" : "false")
        case (.double, .integer), (.float, .integer):
            output.appendInteger(cell.integer)
        case (.double, .real), (.float, .real):
            output.appendDouble(real)
        case (.decimal, .integer):
            output.appendString(String(cell.integer))
        case (.decimal, .real):
            guard real.isFinite else { throw Mismatch(problem: "\(real), which a decimal cannot be") }
            output.appendString(real.description)
        case (.decimal, .text):
            let text = try string(of: cell, in: batch)
            guard JSONNumberSyntax.isValidDecimal(text) else {
                throw Mismatch(problem: "the text \"\(text)\", not a decimal number")
            }
            output.appendString(text)
        case (.date, .integer):
            appendDate(Double(cell.integer), to: &output)
        case (.date, .real):
            appendDate(real, to: &output)
        case (.string, .text), (.uri, .text):
            let valid = batch.withBytes(of: cell) { text in
                guard UTF8Validation.firstInvalidByte(in: text) == nil else { return false }
                output.appendString(raw: text)
                return true
            }
            guard valid else { throw Mismatch(problem: "text that is not valid UTF-8") }
        case (.binary, .blob), (.transformable, .blob):
            output.append("\"")
            output.appendRaw(batch.withBytes(of: cell) { Data($0) }.base64EncodedString())
            output.append("\"")
        case (.binary, .externalDataReference), (.transformable, .externalDataReference):
            output.append("{\"externalDataReference\":")
            output.appendString(try string(of: cell, in: batch))
            output.append("}")
        case (.composite, .blob):
            // A nested object of the elements that have a value, in element-name order.
            guard let elements = batch.withBytes(of: cell, { CompositeValueCoding.decode($0) }) else {
                throw Mismatch(problem: "bytes that are not a composite value")
            }
            try appendComposite(elements, to: &output)
        case (.uuid, .blob) where cell.length == 16:
            let uuid = batch.withBytes(of: cell) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            output.appendString(uuid.uuidString)
        default:
            throw Mismatch(problem: Self.describe(cell.kind))
        }
    }

    /// A composite's elements as a JSON object, each value in the form its attribute type has in a document.
    private static func appendComposite(_ elements: [String: Value], to output: inout JSONOutput) throws(Mismatch) {
        output.append("{")
        var first = true
        for name in elements.keys.sorted() {
            guard let value = elements[name], !value.isNull else { continue }
            if !first { output.append(",") }
            first = false
            output.appendString(name)
            output.append(":")
            switch value {
            case .null: output.append("null")
            case .integer(let integer): output.appendInteger(integer)
            case .double(let real): output.appendDouble(real)
            case .decimal(let decimal): output.appendString(decimal.description)
            case .string(let text), .uri(let text): output.appendString(text)
            case .bool(let flag): output.append(flag ? "true" : "false")
            case .date(let date): appendDate(date.timeIntervalSinceReferenceDate, to: &output)
            case .data(let data), .transformable(let data):
                output.append("\"")
                output.appendRaw(data.base64EncodedString())
                output.append("\"")
            case .uuid(let uuid): output.appendString(uuid.uuidString)
            case .externalDataReference(let name):
                output.append("{\"externalDataReference\":")
                output.appendString(name)
                output.append("}")
            case .composite(let inner): try appendComposite(inner, to: &output)
            }
        }
        output.append("}")
    }

    /// A date as Decant's JSON writes it: ISO 8601 text when it is exact, else seconds since 2001 as a number.
    static func appendDate(_ seconds: Double, to output: inout JSONOutput) {
        output.bytes.append(UInt8(ascii: "\""))
        if ExactDate.appendText(referenceSeconds: seconds, to: &output.bytes) {
            output.bytes.append(UInt8(ascii: "\""))
        } else {
            output.bytes.removeLast()
            output.appendDouble(seconds)
        }
    }

    private static func string(of cell: RecordBatch.Cell, in batch: RecordBatch) throws(Mismatch) -> String {
        guard let text = batch.withBytes(of: cell, { String(validating: $0, as: UTF8.self) }) else {
            throw Mismatch(problem: "text that is not valid UTF-8")
        }
        return text
    }

    private static func describe(_ kind: RecordBatch.Kind) -> String {
        switch kind {
        case .null: "nil"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "text"
        case .blob: "bytes"
        case .externalDataReference: "a reference to an external file"
        default: "a relationship value"
        }
    }
}
