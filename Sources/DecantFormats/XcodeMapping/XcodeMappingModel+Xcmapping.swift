public import DecantCore
public import Foundation
import DecantCodecs

extension XcodeMappingModel {
    /// Reads a `.xcmappingmodel` (the folder, or its `xcmapping.xml`) and compiles it the way Xcode's mapping
    /// compiler does (coredata-formats.md 3.4.2), so the result equals the `.cdm` Xcode would build.
    ///
    /// ```swift
    /// let bundle = try ModelBundle.load(from: modelURL)
    /// let mapping = try XcodeMappingModel(
    ///     xcmappingAt: url, source: bundle.version(named: "Model 2"), destination: bundle.version(named: "Model 3"))
    /// ```
    ///
    /// `source` and `destination` supply the two models; when one is `nil` the snapshot the file embeds
    /// (`sourcemodeldata` / `destinationmodeldata`) is decoded instead. Generated: the entity mapping's type and name,
    /// the FETCH source expression (with `sourcefilterpredicatestring` when set), `$source.<name>` for attributes the
    /// source entity has, the `$manager` instance lookups for relationships, and both entity version hashes; stored
    /// expressions win. Property mappings are sorted by destination name.
    ///
    /// - Throws: ``DecantError``: `.fileNotFound`; `.malformedInput` for a damaged file, snapshot or expression;
    ///   `.usage` when a model is neither given nor embedded; `.modelMismatch` when a model lacks an entity the
    ///   mapping names.
    public init(xcmappingAt url: URL, source: ObjectModel?, destination: ObjectModel?) throws {
        let document = try Self.readDocument(at: url)
        try self.init(document: document, source: source, destination: destination)
    }

    /// Reads a mapping model by what the path is: a `.cdm` file (the models are not needed and are ignored), a
    /// `.xcmappingmodel` folder or an `xcmapping.xml` file (compiled against `source` and `destination`, else against
    /// the embedded snapshots).
    public init(contentsOf url: URL, source: ObjectModel? = nil, destination: ObjectModel? = nil) throws {
        switch try PathKind(url: url) {
        case .cdm:
            self = try Self.readCDM(at: url)
        case .xcmapping:
            try self.init(xcmappingAt: url, source: source, destination: destination)
        }
    }

    /// Reads a mapping model by what the path is, taking the models of a `.xcmappingmodel` from `bundle`: the
    /// versions named like the last path component of `sourcemodelpath` / `destinationmodelpath` (without
    /// `.xcdatamodel`) when the path's `.xcdatamodeld` (if it names one) is the bundle's. Without a bundle, or when it
    /// has no such version, the embedded snapshots are used.
    ///
    /// ```swift
    /// let mapping = try XcodeMappingModel.load(contentsOf: url, bundle: try ModelBundle.load(from: modelURL))
    /// ```
    public static func load(contentsOf url: URL, bundle: ModelBundle?) throws -> XcodeMappingModel {
        switch try PathKind(url: url) {
        case .cdm:
            return try readCDM(at: url)
        case .xcmapping:
            let document = try readDocument(at: url)
            return try XcodeMappingModel(
                document: document, source: bundleVersion(named: document.sourceModelPath, in: bundle),
                destination: bundleVersion(named: document.destinationModelPath, in: bundle))
        }
    }

    /// The version of `bundle` a `.xcmappingmodel`'s `sourcemodelpath` / `destinationmodelpath` names: the one named
    /// like its last path component (without `.xcdatamodel`), unless the path names another `.xcdatamodeld`. Nil
    /// without a bundle, a path or such a version.
    /// The model of one side: the bundle's version `given`, else the snapshot the file embeds, else the snapshot's
    /// error, else a usage error asking for the model (at `path`, the mapping model as named).
    static func model(
        _ given: ObjectModel?, _ snapshot: (model: ObjectModel?, error: DecantError?), _ role: String, path: String
    ) throws -> ObjectModel {
        if let given { return given }
        if let model = snapshot.model { return model }
        if let error = snapshot.error { throw error }
        throw DecantError(
            .usage,
            "the mapping model embeds no \(role) model snapshot: pass the \(role) model (the .xcdatamodeld it was "
                + "made from)", at: Location(path: path))
    }

    static func bundleVersion(named modelPath: String?, in bundle: ModelBundle?) -> ObjectModel? {
        guard let bundle, let modelPath else { return nil }
        let components = modelPath.split(separator: "/").map(String.init)
        // A path into another bundle (`Other.xcdatamodeld/Model.xcdatamodel`) names none of this bundle's
        // versions, even when a version has the same name: the mapping is never compiled against them.
        if components.count > 1, components[components.count - 2].hasSuffix(".xcdatamodeld"),
            components[components.count - 2] != "\(bundle.name).xcdatamodeld"
        {
            return nil
        }
        var name = components.last ?? modelPath
        if name.hasSuffix(".xcdatamodel") { name = String(name.dropLast(".xcdatamodel".count)) }
        return bundle.version(named: name)
    }

    /// The kinds of path ``load(contentsOf:bundle:)`` tells apart.
    enum PathKind {
        case cdm, xcmapping

        init(url: URL) throws {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw DecantError(.fileNotFound, "no mapping model here", at: Location(path: url.displayPath))
            }
            if isDirectory.boolValue, url.pathExtension.lowercased() == "xcmappingmodel" {
                self = .xcmapping
            } else if !isDirectory.boolValue, url.pathExtension.lowercased() == "cdm" {
                self = .cdm
            } else if !isDirectory.boolValue, url.lastPathComponent == "xcmapping.xml" {
                self = .xcmapping
            } else {
                throw DecantError(
                    .unsupportedFormat,
                    "not a mapping model (expected a .cdm file, a .xcmappingmodel folder or an xcmapping.xml file)",
                    at: Location(path: url.displayPath))
            }
        }
    }

    private static func readCDM(at url: URL) throws -> XcodeMappingModel {
        try XcodeMappingModel(cdmData: Data(wholeFile: url, what: "the mapping model"), path: url.displayPath)
    }

    /// Reads `xcmapping.xml` from a `.xcmappingmodel` folder or from the file itself; the path is the one named.
    private static func readDocument(at url: URL) throws -> XcmappingDocument {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no mapping model here", at: Location(path: url.displayPath))
        }
        let file = isDirectory.boolValue ? url.appendingPathComponent("xcmapping.xml") : url
        let filePath = file.displayPath
        XcodeMappingParseObserver.record(url.displayPath)
        var document = try XcmappingDocument(data: Data(wholeFile: file, what: "the mapping model"), path: filePath)
        document.path = url.displayPath
        return document
    }

    init(document: XcmappingDocument, source: ObjectModel?, destination: ObjectModel?) throws {
        let xmlPath = document.path.hasSuffix("xcmapping.xml") ? document.path : document.path + "/xcmapping.xml"
        func snapshot(_ data: Data?, _ key: String) -> (model: ObjectModel?, error: DecantError?) {
            guard let data else { return (nil, nil) }
            do {
                return (try XDPMModelDecoder.decode(data, path: xmlPath), nil)
            } catch let error as DecantError {
                var located = error
                if located.location?.keyPath == nil { located.location?.keyPath = key }
                return (nil, located)
            } catch {
                return (nil, DecantError(.malformedInput, "\(key) does not decode", at: Location(path: xmlPath)))
            }
        }
        let sourceSnapshot = snapshot(document.sourceModelData, "sourcemodeldata")
        let destinationSnapshot = snapshot(document.destinationModelData, "destinationmodeldata")
        let compiler = XcmappingCompiler(
            path: xmlPath,
            source: try Self.model(source, sourceSnapshot, "source", path: document.path),
            destination: try Self.model(destination, destinationSnapshot, "destination", path: document.path),
            document: document)
        self.init(
            path: document.path,
            sourceModelPath: document.sourceModelPath,
            destinationModelPath: document.destinationModelPath,
            sourceModel: sourceSnapshot.model,
            destinationModel: destinationSnapshot.model,
            entityMappings: try compiler.entityMappings()
        )
    }
}

/// The mapping compiler's rules (coredata-formats.md 3.4.2) applied to a read ``XcmappingDocument``.
struct XcmappingCompiler {
    let path: String
    let source: ObjectModel
    let destination: ObjectModel
    let document: XcmappingDocument

    static let manager = NSExpressionNode.variable("manager")

    /// `$source.<path>` as the compiler archives it: `valueForKeyPath:` on the variable.
    static func keyPath(_ path: String, on variable: String) -> NSExpressionNode {
        .function(operand: .variable(variable), selector: "valueForKeyPath:", arguments: [.keyPath(path)])
    }

    /// An expression written as `$variable` or `$variable.key.path` (a relationship mapping's `sourcekeypath`); any
    /// other text is a key path on the evaluated object.
    static func parseKeyPath(_ text: String) -> NSExpressionNode {
        guard text.hasPrefix("$") else { return .keyPath(text) }
        let body = text.dropFirst()
        guard let dot = body.firstIndex(of: ".") else { return .variable(String(body)) }
        return keyPath(String(body[body.index(after: dot)...]), on: String(body[..<dot]))
    }

    /// Runs `body`, naming the object and key in a ``DecantError`` that has no object yet.
    func within<T>(_ id: String, _ key: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as DecantError {
            if error.location?.object == nil {
                var location = error.location ?? Location(path: path)
                location.object = id
                location.keyPath = key
                error.location = location
            }
            throw error
        }
    }

    func entityMappings() throws -> [XcodeEntityMapping] {
        let stored = document.entityMappings
        let names = stored.map(mappingName)
        var result: [XcodeEntityMapping] = []
        for (index, mapping) in stored.enumerated() {
            result.append(try compile(mapping, name: names[index], allNames: Array(zip(stored, names))))
        }
        return result
    }

    func mappingType(_ mapping: XcmappingDocument.EntityMapping) -> XcodeEntityMapping.MappingType {
        let stored = ["custom": XcodeEntityMapping.MappingType.custom, "add": .add, "remove": .remove, "copy": .copy,
            "transform": .transform]
        if let name = mapping.mappingTypeName?.lowercased(), let type = stored[name] { return type }
        if mapping.sourceName == nil { return .add }
        if mapping.destinationName == nil { return .remove }
        if let policy = mapping.policyClassName, !policy.isEmpty { return .custom }
        return .copy
    }

    func mappingName(_ mapping: XcmappingDocument.EntityMapping) -> String {
        if let name = mapping.name, !name.isEmpty { return name }
        switch (mapping.sourceName, mapping.destinationName) {
        case (let source?, let destination?): return "\(source)To\(destination)"
        case (nil, let destination?): return destination
        case (let source?, nil): return source
        case (nil, nil): return ""
        }
    }

    func compile(
        _ mapping: XcmappingDocument.EntityMapping, name: String,
        allNames: [(XcmappingDocument.EntityMapping, String)]
    ) throws -> XcodeEntityMapping {
        let sourceEntity = try mapping.sourceName.map { try entity($0, in: source, role: "source", mapping.id) }
        let destinationEntity = try mapping.destinationName.map {
            try entity($0, in: destination, role: "destination", mapping.id)
        }
        let policy = mapping.policyClassName.flatMap { $0.isEmpty ? nil : $0 }
        var result = XcodeEntityMapping(
            name: name, type: mappingType(mapping), sourceEntityName: mapping.sourceName,
            destinationEntityName: mapping.destinationName,
            sourceEntityVersionHash: sourceEntity.flatMap { source.versionHash(of: $0.name) },
            destinationEntityVersionHash: destinationEntity.flatMap { destination.versionHash(of: $0.name) },
            migrationPolicyClassName: policy)
        if let data = mapping.sourceExpressionData {
            result.sourceExpression = try within(mapping.id, "sourceexpressiondata") {
                try NSExpressionNode.decode(archivedData: data, path: path)
            }
        } else if let sourceName = mapping.sourceName {
            let filter = mapping.filterPredicate.flatMap { $0.isEmpty ? nil : $0 } ?? "TRUEPREDICATE"
            let request = NSExpressionNode.function(
                operand: Self.manager, selector: "fetchRequestForSourceEntityNamed:predicateString:",
                arguments: [.constant(.string(sourceName)), .constant(.string(filter))])
            result.sourceExpression = .fetch(
                request: request, context: Self.keyPath("sourceContext", on: "manager"), countOnly: false)
        }
        if let data = mapping.userInfoData {
            result.userInfo = try within(mapping.id, "userinfodata") { try userInfo(data) }
        }
        let sourceProperties = sourceEntity.map { source.properties(of: $0) }
        var attributes: [XcodePropertyMapping] = []
        for property in mapping.attributes {
            let expression: NSExpressionNode?
            if let data = property.valueExpressionData {
                expression = try within(property.id, "valueexpressiondata") {
                    try NSExpressionNode.decode(archivedData: data, path: path)
                }
            } else if sourceProperties?.attributes.contains(where: { $0.name == property.name }) == true {
                expression = Self.keyPath(property.name, on: "source")
            } else {
                expression = nil
            }
            attributes.append(XcodePropertyMapping(name: property.name, valueExpression: expression))
        }
        var relationships: [XcodePropertyMapping] = []
        for property in mapping.relationships {
            let expression: NSExpressionNode?
            if let data = property.valueExpressionData {
                expression = try within(property.id, "valueexpressiondata") {
                    try NSExpressionNode.decode(archivedData: data, path: path)
                }
            } else if let keyPath = property.sourceKeyPath, let mappingName = property.sourceMappingName {
                expression = .function(
                    operand: Self.manager, selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                    arguments: [.constant(.string(mappingName)), Self.parseKeyPath(keyPath)])
            } else if let relationship = sourceProperties?.relationships.first(where: { $0.name == property.name }) {
                expression = defaultRelationshipExpression(relationship, allNames: allNames)
            } else {
                expression = nil
            }
            relationships.append(XcodePropertyMapping(name: property.name, valueExpression: expression))
        }
        result.attributeMappings = attributes.sorted { VersionHashing.precedes($0.name, $1.name) }
        result.relationshipMappings = relationships.sorted { VersionHashing.precedes($0.name, $1.name) }
        return result
    }

    /// The lookup for a relationship the source entity has: through the one entity mapping whose source is the
    /// relationship's destination (or a sub-entity of it), else through the source relationship.
    func defaultRelationshipExpression(
        _ relationship: Relationship, allNames: [(XcmappingDocument.EntityMapping, String)]
    ) -> NSExpressionNode {
        let sourceValue = Self.keyPath(relationship.name, on: "source")
        var family: Set<String> = []
        if let target = relationship.destinationEntity {
            family.insert(target)
            for entity in source.entities where source.ancestors(of: entity).contains(where: { $0.name == target }) {
                family.insert(entity.name)
            }
        }
        let candidates = allNames.filter { mapping, _ in mapping.sourceName.map(family.contains) ?? false }
        if candidates.count == 1, let only = candidates.first {
            return .function(
                operand: Self.manager, selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments: [.constant(.string(only.1)), sourceValue])
        }
        return .function(
            operand: Self.manager, selector: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
            arguments: [.constant(.string(relationship.name)), sourceValue])
    }

    func entity(_ name: String, in model: ObjectModel, role: String, _ id: String) throws -> Entity {
        guard let entity = model.entity(named: name) else {
            throw DecantError(
                .modelMismatch, "the \(role) model has no entity \(name)",
                at: Location(path: path, entity: name, object: id))
        }
        return entity
    }

    /// A stored user-info dictionary (a keyed archive), keeping string values.
    func userInfo(_ data: Data) throws -> [String: String] {
        let archive = try KeyedArchive(data: data, path: path)
        var info: [String: String] = [:]
        for entry in try archive.stringKeyedEntries(archive.topValue(forKey: "root")) ?? [] {
            if let text = try? archive.string(entry.value) { info[entry.key] = text }
        }
        return info
    }
}
