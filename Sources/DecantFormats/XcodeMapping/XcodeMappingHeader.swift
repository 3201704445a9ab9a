package import DecantCore
package import Foundation
import Synchronization
import DecantCodecs

/// What a mapping model says of the two models it maps, read without building its mappings: the entity names and
/// version hashes of its entity mappings, all that Core Data's fitting test looks at (coredata-formats.md 3.3).
///
/// A `.cdm` stores the hashes (`NSSourceEntityVersionHash` / `NSDestinationEntityVersionHash`): only those keys and
/// the entity names are read, no expression. A `.xcmappingmodel` names its two models and embeds them: its XML is
/// scanned for the mapping-model object and its entity mappings' `sourcename` / `destinationname`, the snapshots are
/// kept as their base64 text, and ``entityHashes(bundle:)`` takes the hashes from the bundle's versions the paths
/// name, decoding a snapshot only for a side the bundle does not supply, exactly as
/// ``XcodeMappingModel/load(contentsOf:bundle:)`` chooses the models it compiles against. No attribute or
/// relationship mapping and no expression is read.
///
/// ```swift
/// let header = try XcodeMappingHeader(contentsOf: url)
/// let hashes = try header.entityHashes(bundle: bundle)   // the sets s and d of 3.3
/// ```
package struct XcodeMappingHeader: Sendable {
    /// The file it was read from, as named.
    package var path: String
    /// The source entity names of its entity mappings that have a source.
    package var sourceEntityNames: Set<String>
    /// The destination entity names of its entity mappings that have a destination.
    package var destinationEntityNames: Set<String>
    private var storage: Storage

    private enum Storage: Sendable {
        /// A `.cdm`'s stored hashes (non-nil ones).
        case stored(source: Set<Data>, destination: Set<Data>)
        /// A `.xcmappingmodel`: what choosing its models and hashing the named entities needs.
        case xcmapping(XcmappingHeader)
    }

    /// Reads the header of a `.cdm` file, a `.xcmappingmodel` folder or an `xcmapping.xml` file.
    /// - Throws: ``DecantError``: `.fileNotFound`, `.unsupportedFormat` for another kind of path, `.malformedInput`
    ///   for a file whose archive, XML or mapping-model object does not read.
    package init(contentsOf url: URL) throws {
        switch try XcodeMappingModel.PathKind(url: url) {
        case .cdm:
            let data = try Data(wholeFile: url, what: "the mapping model")
            let path = url.displayPath
            let mappings = try XcodeMappingModel.cdmEntityHashes(data: data, path: path)
            self.path = path
            sourceEntityNames = Set(mappings.compactMap { $0.sourceEntityVersionHash == nil ? nil : $0.sourceEntityName })
            destinationEntityNames = Set(
                mappings.compactMap { $0.destinationEntityVersionHash == nil ? nil : $0.destinationEntityName })
            storage = .stored(
                source: Set(mappings.compactMap(\.sourceEntityVersionHash)),
                destination: Set(mappings.compactMap(\.destinationEntityVersionHash)))
        case .xcmapping:
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let file = isDirectory.boolValue ? url.appendingPathComponent("xcmapping.xml") : url
            let header = try XcmappingHeader(
                data: Data(wholeFile: file, what: "the mapping model"), path: file.displayPath, named: url.displayPath)
            path = url.displayPath
            sourceEntityNames = Set(header.mappings.compactMap(\.source))
            destinationEntityNames = Set(header.mappings.compactMap(\.destination))
            storage = .xcmapping(header)
        }
    }

    /// Whether ``entityHashes(bundle:)`` decodes an embedded model snapshot for `bundle`: a `.xcmappingmodel` one of
    /// whose model paths names no version of `bundle` (``XcodeMappingModel/bundleVersion(named:in:)``).
    package func needsSnapshot(bundle: ModelBundle?) -> Bool {
        guard case .xcmapping(let header) = storage else { return false }
        return XcodeMappingModel.bundleVersion(named: header.sourceModelPath, in: bundle) == nil
            || XcodeMappingModel.bundleVersion(named: header.destinationModelPath, in: bundle) == nil
    }

    /// The non-nil source and destination entity version hashes of its entity mappings (the sets `s` and `d` of
    /// 3.3), equal to ``XcodeMappingModel/sourceEntityHashes`` and ``XcodeMappingModel/destinationEntityHashes`` of
    /// the model ``XcodeMappingModel/load(contentsOf:bundle:)`` reads from the same file and bundle.
    /// - Throws: what that load throws choosing the models: a snapshot that does not decode (`.malformedInput`), no
    ///   model for a side (`.usage`), an entity the model lacks (`.modelMismatch`, the first in mapping order).
    package func entityHashes(bundle: ModelBundle?) throws -> (source: Set<Data>, destination: Set<Data>) {
        switch storage {
        case .stored(let source, let destination):
            return (source, destination)
        case .xcmapping(let header):
            return try header.entityHashes(bundle: bundle)
        }
    }
}

/// Sees every mapping model read whole (its mappings built, ``XcodeMappingModel/load(contentsOf:bundle:)`` and the
/// initialisers that read a file or `.cdm` bytes), for tests that check what a search parses. Set for a task with
/// `XcodeMappingParseObserver.$current.withValue(observer) { … }`; nil (nothing recorded) otherwise.
package final class XcodeMappingParseObserver: Sendable {
    /// The observer of the current task.
    @TaskLocal package static var current: XcodeMappingParseObserver?

    private let paths = Mutex<[String]>([])

    package init() {}

    /// The paths read whole, in the order they were read (one entry per read).
    package var parsed: [String] { paths.withLock { $0 } }

    static func record(_ path: String) {
        current?.paths.withLock { $0.append(path) }
    }
}

/// A `.xcmappingmodel`'s `xcmapping.xml` read for its header: the mapping-model object's model paths and snapshot
/// texts, and its entity mappings' entity names, walked from the single `XDDEVMAPPINGMODEL` as
/// ``XcmappingDocument`` walks it. Values are taken from the text the store holds; the snapshots are decoded only when
/// a hash needs them.
private struct XcmappingHeader: Sendable {
    struct Mapping: Sendable {
        var id: String
        var source: String?
        var destination: String?
    }

    /// The `xcmapping.xml` path, for errors.
    var path: String
    /// The path as named (the `.xcmappingmodel`, or its `xcmapping.xml`), for errors about the whole model.
    var namedPath: String
    var sourceModelPath: String?
    var destinationModelPath: String?
    /// The snapshots' base64 text, as written (white space and all).
    var sourceSnapshot: ArraySlice<UInt8>?
    var destinationSnapshot: ArraySlice<UInt8>?
    /// In `mappingnumber` order (stored order where numbers tie).
    var mappings: [Mapping]

    init(data: Data, path: String, named: String) throws {
        self.path = path
        namedPath = named
        // The snapshots are nearly all of the file: they are kept as the bytes written, not decoded into text.
        let bytes = Array(data)
        let snapshotFields: Set<String> = ["sourcemodeldata", "destinationmodeldata"]
        // Attribute and relationship mappings (most of the objects) are skipped unread.
        let document = try XMLStoreDocument(
            bytes: bytes, path: path, rawTextOf: snapshotFields, objectTypes: ["XDDEVMAPPINGMODEL", "XDDEVENTITYMAPPING"])
        if let version = document.version, version != 134_481_920 {
            throw DecantError(
                .unsupportedFormat,
                "databaseInfo/version is \(version), not 134481920: written by an incompatible version of Core Data",
                at: Location(path: path))
        }
        var byID: [String: XMLStoreDocument.Object] = [:]
        for object in document.objects {
            guard byID.updateValue(object, forKey: object.id) == nil else {
                throw DecantError(
                    .malformedInput, "object id \(object.id) is used twice",
                    at: Location(path: path, line: object.line, entity: object.type, object: object.id))
            }
        }
        let roots = document.objects.filter { $0.type.uppercased() == "XDDEVMAPPINGMODEL" }
        guard roots.count == 1, let root = roots.first else {
            throw DecantError(
                .malformedInput, "expected one XDDEVMAPPINGMODEL object, found \(roots.count)", at: Location(path: path))
        }
        func field(_ object: XMLStoreDocument.Object, _ name: String) -> XMLStoreDocument.Field? {
            object.fields.first { $0.name.lowercased() == name && !$0.isRelationship }
        }
        func string(_ object: XMLStoreDocument.Object, _ name: String) throws -> String? {
            guard let field = field(object, name) else { return nil }
            guard field.type == "string" else {
                throw DecantError(
                    .malformedInput, "\(name) is not a string",
                    at: Location(path: path, entity: object.type.uppercased(), object: object.id, keyPath: name))
            }
            return field.text
        }
        func binary(_ object: XMLStoreDocument.Object, _ name: String) throws -> ArraySlice<UInt8>? {
            guard let field = field(object, name) else { return nil }
            guard field.type == "binary" || field.type == "transformable" else {
                throw DecantError(
                    .malformedInput, "\(name) is not binary data",
                    at: Location(path: path, entity: object.type.uppercased(), object: object.id, keyPath: name))
            }
            return field.rawText.map { bytes[$0] } ?? ArraySlice(field.text.utf8)
        }
        sourceModelPath = try string(root, "sourcemodelpath")
        destinationModelPath = try string(root, "destinationmodelpath")
        sourceSnapshot = try binary(root, "sourcemodeldata")
        destinationSnapshot = try binary(root, "destinationmodeldata")
        let references = root.fields.first { $0.isRelationship && $0.name.lowercased() == "entitymappings" }?.text ?? ""
        var numbered: [(number: Int64, mapping: Mapping)] = []
        for id in references.split(whereSeparator: \.isWhitespace).map(String.init) {
            guard let object = byID[id] else {
                // Missing, or an object of a type the header read skips: not an entity mapping either way.
                throw DecantError(
                    .malformedInput, "entitymappings refers to \(id), which is no XDDEVENTITYMAPPING",
                    at: Location(path: path, entity: "XDDEVMAPPINGMODEL", object: root.id, keyPath: "entitymappings"))
            }
            guard object.type.uppercased() == "XDDEVENTITYMAPPING" else {
                throw DecantError(
                    .malformedInput,
                    "entitymappings refers to \(id), a \(object.type.uppercased()), not a XDDEVENTITYMAPPING",
                    at: Location(path: path, entity: "XDDEVMAPPINGMODEL", object: root.id, keyPath: "entitymappings"))
            }
            let number = field(object, "mappingnumber").flatMap {
                Int64($0.text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            numbered.append(
                (
                    number ?? 0,
                    Mapping(
                        id: id, source: try string(object, "sourcename"),
                        destination: try string(object, "destinationname"))
                ))
        }
        // A stable sort, as XcmappingDocument's: files that number every mapping 0 keep their stored order.
        mappings = numbered.enumerated().sorted {
            ($0.element.number, $0.offset) < ($1.element.number, $1.offset)
        }.map(\.element.mapping)
    }

    /// As ``XcodeMappingModel/load(contentsOf:bundle:)`` then `XcmappingCompiler` choose the models and hash the
    /// entities: the bundle's version a model path names, else the decoded snapshot, else `.usage`; every named entity
    /// must be in its model (`.modelMismatch`).
    func entityHashes(bundle: ModelBundle?) throws -> (source: Set<Data>, destination: Set<Data>) {
        // Both snapshots are decoded before either model is chosen, as the full read does, but only for a side the
        // bundle does not supply: a snapshot's error then surfaces in the same order.
        let given = (
            source: XcodeMappingModel.bundleVersion(named: sourceModelPath, in: bundle),
            destination: XcodeMappingModel.bundleVersion(named: destinationModelPath, in: bundle)
        )
        let sourceSnapshot = given.source == nil ? snapshot(self.sourceSnapshot, "sourcemodeldata") : (nil, nil)
        let destinationSnapshot =
            given.destination == nil ? snapshot(self.destinationSnapshot, "destinationmodeldata") : (nil, nil)
        let source = try XcodeMappingModel.model(given.source, sourceSnapshot, "source", path: namedPath)
        let destination = try XcodeMappingModel.model(given.destination, destinationSnapshot, "destination", path: namedPath)
        var hashes = (source: Set<Data>(), destination: Set<Data>())
        for mapping in mappings {
            if let name = mapping.source {
                guard let hash = source.entity(named: name).flatMap({ source.versionHash(of: $0.name) }) else {
                    throw missing(name, role: "source", mapping.id)
                }
                hashes.source.insert(hash)
            }
            if let name = mapping.destination {
                guard let hash = destination.entity(named: name).flatMap({ destination.versionHash(of: $0.name) })
                else {
                    throw missing(name, role: "destination", mapping.id)
                }
                hashes.destination.insert(hash)
            }
        }
        return hashes
    }

    func missing(_ name: String, role: String, _ id: String) -> DecantError {
        DecantError(
            .modelMismatch, "the \(role) model has no entity \(name)", at: Location(path: path, entity: name, object: id))
    }

    /// A snapshot decoded from its base64 text, or the error it gives (located as the full read locates it).
    func snapshot(_ text: ArraySlice<UInt8>?, _ key: String) -> (model: ObjectModel?, error: DecantError?) {
        guard let text else { return (nil, nil) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        for byte in text where byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
            bytes.append(byte)
        }
        guard let data = Data(base64Encoded: Data(bytes)) else {
            return (nil, DecantError(
                .malformedInput, "\(key) is not binary data",
                at: Location(path: path, entity: "XDDEVMAPPINGMODEL", keyPath: key)))
        }
        do {
            return (try XDPMModelDecoder.decode(data, path: path), nil)
        } catch let error as DecantError {
            var located = error
            if located.location?.keyPath == nil { located.location?.keyPath = key }
            return (nil, located)
        } catch {
            return (nil, DecantError(.malformedInput, "\(key) does not decode", at: Location(path: path)))
        }
    }
}
