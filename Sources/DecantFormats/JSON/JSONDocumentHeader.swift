public import DecantCore
import DecantCodecs
public import Foundation

/// The `"decant"` header of Decant's JSON document and the first line of its NDJSON form: the model version the
/// objects follow (resolved by its entity version hashes, as a store's are) and the store's metadata.
///
/// ```json
/// {"formatVersion": 1,
///  "model": {"name": "Notes 3", "versionIdentifiers": ["3"],
///            "entityVersionHashes": {"Folder": "nU7v…=", "Note": "Uanh…="}},
///  "metadata": {"NSStoreUUID": "0F4C…", "NSStoreModelVersionChecksumKey": "H3sO…="}}
/// ```
/// ```swift
/// let header = JSONDocumentHeader(model: notes)
/// let model = try header.resolveModel(bundle: bundle, at: Location(path: "notes.json"))
/// ```
public struct JSONDocumentHeader: Sendable, Hashable {
    /// The version of Decant's JSON document this header describes; 1.
    public static let currentFormatVersion = 1

    /// The document's format version.
    public var formatVersion: Int
    /// The model version's name, when it has one (informative: the hashes decide).
    public var modelName: String?
    /// The model's version identifiers.
    public var versionIdentifiers: [String]
    /// Every entity's version hash.
    public var entityVersionHashes: [String: Data]
    /// The store metadata: `NSStoreUUID`, the model's checksum and hashes digest, and any other string keys.
    public var metadata: [String: String]

    /// The header of a new document for `model`, with a fresh store UUID.
    public init(model: ObjectModel, storeUUID: String = UUID().uuidString.uppercased()) {
        let hashes = model.entityVersionHashes
        self.formatVersion = Self.currentFormatVersion
        self.modelName = model.versionName
        self.versionIdentifiers = model.versionIdentifiers
        self.entityVersionHashes = hashes
        self.metadata = [
            "NSStoreUUID": storeUUID,
            "NSStoreModelVersionChecksumKey": ObjectModel.versionChecksum(of: hashes),
            "NSStoreModelVersionHashesDigest": ObjectModel.versionHashesDigest(of: hashes),
        ]
    }

    /// The version of `bundle` whose entity hashes equal the header's.
    /// - Throws: `.modelMismatch` naming the nearest version and what differs; `.unsupportedFormat` without a
    ///   bundle.
    public func resolveModel(bundle: ModelBundle?, at location: Location) throws -> ObjectModel {
        try ModelMatch.resolve(
            storeHashes: entityVersionHashes, storeIdentifiers: versionIdentifiers, bundle: bundle, cachedModel: nil,
            missingModelAdvice: "the document names its model version by hash only; give the model with --model",
            at: location)
    }
}

extension JSONDocumentHeader {
    /// The header as compact JSON (keys in a fixed order, hashes sorted by entity name).
    func encoded() -> [UInt8] {
        var output = JSONOutput()
        output.append("{\"formatVersion\":")
        output.appendRaw(String(formatVersion))
        output.append(",\"model\":{\"name\":")
        if let modelName { output.appendString(modelName) } else { output.append("null") }
        output.append(",\"versionIdentifiers\":[")
        for (index, identifier) in versionIdentifiers.enumerated() {
            if index > 0 { output.append(",") }
            output.appendString(identifier)
        }
        output.append("],\"entityVersionHashes\":{")
        for (index, name) in entityVersionHashes.keys.sorted().enumerated() {
            if index > 0 { output.append(",") }
            output.appendString(name)
            output.append(":")
            output.appendString(entityVersionHashes[name]?.base64EncodedString() ?? "")
        }
        output.append("}},\"metadata\":{")
        for (index, key) in metadata.keys.sorted().enumerated() {
            if index > 0 { output.append(",") }
            output.appendString(key)
            output.append(":")
            output.appendString(metadata[key] ?? "")
        }
        output.append("}}")
        return output.bytes
    }

    /// Reads a header from its parsed JSON.
    /// - Throws: `.malformedInput` naming the key that is wrong; `.unsupportedFormat` for a newer format version.
    init(node: JSONNode, path: String) throws {
        func failure(_ message: String, _ node: JSONNode, key: String) -> DecantError {
            DecantError(
                .malformedInput, message, at: Location(path: path, line: node.line, column: node.column, keyPath: key))
        }
        guard let members = node.value.members else {
            throw failure("expected the header object, found \(node.value.kindDescription)", node, key: "decant")
        }
        var formatVersion: Int?
        var modelNode: JSONNode?
        var metadata: [String: String] = [:]
        for member in members {
            switch member.key {
            case "formatVersion":
                guard let text = member.node.value.numberText, let version = Int(text) else {
                    throw failure("expected an integer", member.node, key: "decant.formatVersion")
                }
                formatVersion = version
            case "model":
                modelNode = member.node
            case "metadata":
                guard let entries = member.node.value.members else {
                    throw failure("expected an object of strings", member.node, key: "decant.metadata")
                }
                for entry in entries {
                    guard let text = entry.node.value.stringValue else {
                        throw failure(
                            "expected a string, found \(entry.node.value.kindDescription)", entry.node,
                            key: "decant.metadata.\(entry.key)")
                    }
                    metadata[entry.key] = text
                }
            default:
                throw failure(
                    "unknown key \(member.key) in the header (expected formatVersion, model, metadata)", member.node,
                    key: "decant.\(member.key)")
            }
        }
        guard let formatVersion else { throw failure("the header has no formatVersion", node, key: "decant") }
        guard formatVersion == Self.currentFormatVersion else {
            throw DecantError(
                .unsupportedFormat,
                "the document is in format version \(formatVersion); this Decant reads version "
                    + "\(Self.currentFormatVersion)",
                at: Location(path: path, line: node.line, column: node.column, keyPath: "decant.formatVersion"))
        }
        guard let modelNode, let modelMembers = modelNode.value.members else {
            throw failure("the header has no model object", node, key: "decant.model")
        }
        var name: String?
        var identifiers: [String] = []
        var hashes: [String: Data]?
        for member in modelMembers {
            let key = "decant.model.\(member.key)"
            switch member.key {
            case "name":
                switch member.node.value {
                case .null: name = nil
                case .string(let text): name = text
                default: throw failure("expected a string or null", member.node, key: key)
                }
            case "versionIdentifiers":
                guard case .array(let elements) = member.node.value else {
                    throw failure("expected an array of strings", member.node, key: key)
                }
                identifiers = try elements.map { element in
                    guard let text = element.value.stringValue else {
                        throw failure("expected a string, found \(element.value.kindDescription)", element, key: key)
                    }
                    return text
                }
            case "entityVersionHashes":
                guard let entries = member.node.value.members else {
                    throw failure("expected an object of base64 hashes", member.node, key: key)
                }
                var found: [String: Data] = [:]
                for entry in entries {
                    guard let text = entry.node.value.stringValue, let data = Data(base64Encoded: text) else {
                        throw failure("expected a base64 version hash", entry.node, key: "\(key).\(entry.key)")
                    }
                    found[entry.key] = data
                }
                hashes = found
            default:
                throw failure(
                    "unknown key \(member.key) in the model (expected name, versionIdentifiers, entityVersionHashes)",
                    member.node, key: key)
            }
        }
        guard let hashes else {
            throw failure("the model has no entityVersionHashes", modelNode, key: "decant.model")
        }
        self.formatVersion = formatVersion
        self.modelName = name
        self.versionIdentifiers = identifiers
        self.entityVersionHashes = hashes
        self.metadata = metadata
    }
}
