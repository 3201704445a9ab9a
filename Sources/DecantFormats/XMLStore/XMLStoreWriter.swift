public import DecantCore
import DecantCodecs
public import Foundation

/// Writes a Core Data XML store (`NSXMLStoreType`) as Core Data lays it out (sections 5 and 5.1 of the formats spec):
/// `databaseInfo` with version 134481920, the store UUID, `nextObjectID` and the metadata plist (the model version's
/// entity hashes and digest), then every object in ascending id order: `type` upper-cased, property names
/// lower-cased, attributes then relationships in the entity's property order, nil values left out, both sides of
/// every relationship with `idrefs` (ordered ones in order).
///
/// Objects are held until ``finish()`` (a relationship may name an object written later, and a to-many carried by
/// its inverse is rebuilt from the other side), then the document is written where the writer was told (a job's
/// staging location), or, made with ``init(creating:model:storeUUID:)``, beside the destination and renamed into
/// place. Ids read from an XML store (`z102`…) are kept; other objects are numbered from `z102` in the order
/// they arrive.
///
/// ```swift
/// var writer = try XMLStoreWriter(creating: url, model: model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
/// - Throws: ``DecantError`` `.unsupportedFormat` for a model with names that differ only in case or attribute types
///   the store cannot hold, `.malformedInput` for a reference to an object that was never written.
public final class XMLStoreWriter: RecordWriter {
    /// The Core Data framework version written into the metadata.
    public static let frameworkVersion = 1344

    /// The model version the store is written for.
    public let model: ObjectModel
    /// The store UUID written into `databaseInfo`.
    public let storeUUID: String

    private struct ObjectKey: Hashable {
        var root: String
        var id: RecordID
    }

    private enum Members {
        case toOne(ObjectReference?)
        case toMany([ObjectReference])
        case viaInverse
    }

    private struct Pending {
        var entity: String
        var id: RecordID
        /// Encoded `<attribute>` lines.
        var attributes: String
        /// Per relationship, in the entity's property order.
        var relationships: [Members]
    }

    /// Per entity: attributes and relationships in the entity's property order (persistent only).
    private struct Shape {
        var attributes: [Attribute]
        var relationships: [Relationship]
        /// Layout position of each attribute and relationship above.
        var attributeSlots: [Int]
        var relationshipSlots: [Int]
    }

    /// Where the store is written.
    private let target: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:storeUUID:)``).
    private var lease: DestinationLease?
    private let displayPath: String
    private var shapes: [String: Shape] = [:]
    private var pending: [Pending] = []
    private var finished = false

    /// Starts a store at `url` for `model`; nothing appears there until ``finish()``, which writes it beside `url`
    /// and renames it into place (a ``DestinationLease``).
    public convenience init(creating url: URL, model: ObjectModel, storeUUID: String = UUID().uuidString.uppercased()) throws {
        let lease = try DestinationLease(destination: url)
        try self.init(writingAt: lease.staging, model: model, storeUUID: storeUUID)
        self.lease = lease
    }

    /// Starts a store for `model` to be written at `url` by ``finish()``: where the job tells it (its staging
    /// location), and only there.
    public init(writingAt url: URL, model: ObjectModel, storeUUID: String = UUID().uuidString.uppercased()) throws {
        self.model = model
        self.storeUUID = storeUUID
        self.target = url
        self.displayPath = url.displayPath
        let here = Location(path: displayPath)
        var entityNames: [String: String] = [:]
        for entity in model.entities {
            if let other = entityNames.updateValue(entity.name, forKey: entity.name.uppercased()) {
                throw DecantError(
                    .unsupportedFormat,
                    "entities \(other) and \(entity.name) differ only in case; an XML store "
                        + "writes entity names upper-cased", at: here)
            }
            guard let layout = RecordLayout(entity: entity.name, in: model) else { continue }
            let (attributes, relationships) = model.properties(of: entity)
            let stored = attributes.filter { !$0.isTransient }
            let related = relationships.filter { !$0.isTransient }
            var propertyNames: [String: String] = [:]
            for name in stored.map(\.name) + related.map(\.name) {
                if let other = propertyNames.updateValue(name, forKey: name.lowercased()) {
                    throw DecantError(
                        .unsupportedFormat,
                        "properties \(other) and \(name) differ only in case; an XML store writes "
                            + "property names lower-cased", at: Location(path: displayPath, entity: entity.name))
                }
            }
            for attribute in stored where XMLStoreValueText.token(for: attribute.type) == nil {
                throw DecantError(
                    .unsupportedFormat,
                    "attribute \(attribute.name) is of type \(attribute.type.modelName), which "
                        + "an XML store cannot hold", at: Location(path: displayPath, entity: entity.name))
            }
            shapes[entity.name] = Shape(
                attributes: stored, relationships: related,
                attributeSlots: stored.map { layout.attributeIndex($0.name) ?? 0 },
                relationshipSlots: related.map { layout.relationshipIndex($0.name) ?? 0 })
        }
    }

    deinit {
        if !finished { try? FileManager.default.removeItem(at: target) }
    }

    public func write(_ batch: RecordBatch) throws {
        let entity = batch.layout.entityName
        guard let shape = shapes[entity] else {
            throw DecantError(
                .modelMismatch, "the model has no entity \(entity)", at: Location(path: displayPath, entity: entity))
        }
        let attributeCount = batch.layout.attributes.count
        for row in 0..<batch.count {
            let id = batch.id(at: row)
            var lines = ""
            for (attribute, slot) in zip(shape.attributes, shape.attributeSlots) {
                let value = batch.value(row: row, attribute: slot)
                if value.isNull { continue }
                guard let text = XMLStoreValueText.text(of: value) else {
                    throw DecantError(
                        .unsupportedFormat, "\(attribute.name): an XML store cannot hold \(value)",
                        at: Location(
                            path: displayPath, entity: entity, object: "\(entity)/\(id)", keyPath: attribute.name))
                }
                let token = XMLStoreValueText.token(for: attribute.type) ?? "string"
                lines +=
                    "        <attribute name=\"\(Self.escape(attribute.name.lowercased(), quoting: true))\" "
                    + "type=\"\(token)\">\(Self.escape(text, quoting: false))</attribute>\n"
            }
            var members: [Members] = []
            for slot in shape.relationshipSlots {
                let cell = batch.cell(row: row, column: attributeCount + slot)
                switch cell.kind {
                case .reference, .externalReference: members.append(.toOne(batch.reference(of: cell)))
                case .referenceList:
                    let start = Int(cell.integer)
                    members.append(
                        .toMany(batch.references[start..<start + Int(cell.length)].map { batch.reference(of: $0) }))
                case .viaInverse: members.append(.viaInverse)
                default: members.append(.toOne(nil))
                }
            }
            pending.append(Pending(entity: entity, id: id, attributes: lines, relationships: members))
        }
    }

    public func finish() throws {
        guard !finished else { return }
        let document = try render()
        do {
            try Data(document.utf8).write(to: target)
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw DecantError(
                .cannotCreateOutput, "cannot write the XML store", at: Location(path: displayPath), underlyingError: error)
        }
        try lease?.commit()
        finished = true
        pending = []
    }

    public func abandon() {
        guard !finished else { return }
        finished = true
        pending = []
        try? FileManager.default.removeItem(at: target)
    }

    // MARK: Rendering

    private func key(_ entity: String, _ id: RecordID) -> ObjectKey {
        let root = model.entity(named: entity).map { model.root(of: $0).name } ?? entity
        return ObjectKey(root: root, id: id)
    }

    /// The whole document.
    private func render() throws -> String {
        var index: [ObjectKey: Int] = [:]
        for (position, object) in pending.enumerated() {
            guard index.updateValue(position, forKey: key(object.entity, object.id)) == nil else {
                throw DecantError(
                    .malformedInput, "object \(object.entity)/\(object.id) was written twice",
                    at: Location(path: displayPath, entity: object.entity, object: "\(object.entity)/\(object.id)"))
            }
        }
        let numbers = Self.objectNumbers(pending.map(\.id))
        func target(_ reference: ObjectReference, from object: Pending, through relationship: Relationship) throws
            -> Int
        {
            guard let position = index[key(reference.entity, reference.id)] else {
                throw DecantError(
                    .malformedInput,
                    "\(relationship.name) refers to \(reference), which is not among the objects written",
                    at: Location(
                        path: displayPath, entity: object.entity, object: "\(object.entity)/\(object.id)",
                        keyPath: relationship.name))
            }
            return position
        }
        // To-many relationships carried by their inverse: gathered from the to-one side.
        var carried: [Int: [String: [Int]]] = [:]
        for (position, object) in pending.enumerated() {
            guard let shape = shapes[object.entity] else { continue }
            for (relationship, members) in zip(shape.relationships, object.relationships) {
                guard case .toOne(let reference?) = members, let inverse = relationship.inverseName else { continue }
                let owner = try target(reference, from: object, through: relationship)
                carried[owner, default: [:]][inverse, default: []].append(position)
            }
        }

        var text = "<?xml version=\"1.0\" standalone=\"yes\"?>\n"
        text += "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n<database>\n"
        text += "    <databaseInfo>\n        <version>134481920</version>\n"
        text += "        <UUID>\(Self.escape(storeUUID, quoting: false))</UUID>\n"
        text += "        <nextObjectID>\(numbers.max() ?? 101)</nextObjectID>\n"
        text += "        <metadata>\n" + metadataPlist() + "        </metadata>\n    </databaseInfo>\n"
        for position in pending.indices.sorted(by: { numbers[$0] < numbers[$1] }) {
            let object = pending[position]
            guard let shape = shapes[object.entity] else { continue }
            text +=
                "    <object type=\"\(Self.escape(object.entity.uppercased(), quoting: true))\" "
                + "id=\"z\(numbers[position])\">\n"
            text += object.attributes
            for (relationship, members) in zip(shape.relationships, object.relationships) {
                var targets: [Int]
                switch members {
                case .toOne(let reference):
                    targets = try reference.map { [try target($0, from: object, through: relationship)] } ?? []
                case .toMany(let references):
                    targets = try references.map { try target($0, from: object, through: relationship) }
                case .viaInverse:
                    targets = carried[position]?[relationship.name] ?? []
                    if !relationship.isOrdered { targets.sort { numbers[$0] < numbers[$1] } }
                }
                let destination = Self.escape((relationship.destinationEntity ?? "").uppercased(), quoting: true)
                let counts = relationship.isToMany ? "0/0" : "1/1"
                text +=
                    "        <relationship name=\"\(Self.escape(relationship.name.lowercased(), quoting: true))\" "
                    + "type=\"\(counts)\" destination=\"\(destination)\""
                if !targets.isEmpty {
                    text += " idrefs=\"" + targets.map { "z\(numbers[$0])" }.joined(separator: " ") + "\""
                }
                text += "></relationship>\n"
            }
            text += "    </object>\n"
        }
        text += "</database>"
        return text
    }

    /// Keeps ids that are all `z<number>` and distinct (a store read from an XML store); else numbers from 102.
    private static func objectNumbers(_ ids: [RecordID]) -> [Int64] {
        var kept: [Int64] = []
        var seen: Set<Int64> = []
        for id in ids {
            guard case .external(let name) = id, name.hasPrefix("z"), let number = Int64(name.dropFirst()),
                number > 0, seen.insert(number).inserted
            else { return ids.indices.map { Int64(102 + $0) } }
            kept.append(number)
        }
        return kept
    }

    /// The metadata plist, pretty-printed as Core Data does inside `<metadata>`.
    private func metadataPlist() -> String {
        let hashes = model.entityVersionHashes
        var hashDictionary = PropertyListDictionary()
        for name in hashes.keys.sorted() { hashDictionary[name] = .data(hashes[name] ?? Data()) }
        let plist: PropertyListDictionary = [
            "NSPersistenceFrameworkVersion": .integer(Int64(Self.frameworkVersion)),
            "NSStoreModelVersionHashes": .dictionary(hashDictionary),
            "NSStoreModelVersionHashesDigest": .string(ObjectModel.versionHashesDigest(of: hashes)),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array(model.versionIdentifiers.map { .string($0) }),
        ]
        var text = "            <plist version=\"1.0\">\n"
        Self.renderPlist(.dictionary(plist), indent: 16, into: &text)
        return text + "            </plist>\n"
    }

    private static func renderPlist(_ value: PropertyListValue, indent: Int, into text: inout String) {
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .dictionary(let dictionary):
            text += pad + "<dict>\n"
            for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
                text += pad + "    <key>\(escape(key, quoting: false))</key>\n"
                renderPlist(value, indent: indent + 4, into: &text)
            }
            text += pad + "</dict>\n"
        case .array(let elements), .set(let elements):
            text += pad + "<array>\n"
            for element in elements { renderPlist(element, indent: indent + 4, into: &text) }
            text += pad + "</array>\n"
        case .string(let string): text += pad + "<string>\(escape(string, quoting: false))</string>\n"
        case .integer(let number): text += pad + "<integer>\(number)</integer>\n"
        case .real(let number): text += pad + "<real>\(number)</real>\n"
        case .bool(let flag): text += pad + (flag ? "<true/>\n" : "<false/>\n")
        case .data(let data): text += pad + "<data>\n\t\t\(data.base64EncodedString())\n\t\t</data>\n"
        case .date, .uid, .null: break
        }
    }

    /// Escapes text for element content or (with `quoting`) a double-quoted attribute value. Control characters
    /// other than tab and line feed, and carriage returns (which XML would turn into line feeds), become character
    /// references.
    static func escape(_ text: String, quoting: Bool) -> String {
        guard
            text.unicodeScalars.contains(where: { $0 == "&" || $0 == "<" || $0 == ">" || $0.value < 0x20 || $0 == "\"" }
            )
        else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where quoting: result += "&quot;"
            case "\n" where !quoting, "\t" where !quoting: result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20: result += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

@available(*, unavailable, message: "a writer owns its pending output; use it from one task")
extension XMLStoreWriter: Sendable {}
