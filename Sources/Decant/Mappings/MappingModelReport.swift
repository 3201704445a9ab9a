import Foundation

/// What `decant inspect X.xcmappingmodel` (or `.cdm`) prints: the source and destination versions the mapping model
/// fits, by their entities' version hashes (and by name among a bundle's versions), its entity mappings, and the
/// expressions and policies that need the app's code, which Decant runs only through `call()` bindings.
///
/// ```swift
/// let report = MappingModelReport(mapping: try XcodeMappingModel.load(contentsOf: url, bundle: nil), path: path)
/// print(report.text)
/// ```
public struct MappingModelReport: Encodable, Sendable {
    /// One side of the mapping (source or destination).
    public struct Side: Encodable, Sendable {
        /// The version hash (base64) of each entity the entity mappings name on this side.
        public var entityHashes: [String: String]
        /// With a bundle: the names of its versions whose hashes include all of `entityHashes` (Core Data's test,
        /// coredata-formats.md 3.3); nil without a bundle.
        public var versions: [String]?
    }

    /// An `NSEntityMapping`.
    public struct EntityMapping: Encodable, Sendable {
        public var name: String
        /// `add`, `remove`, `copy`, `transform`, `custom` or `undefined`.
        public var kind: String
        public var source: String?
        public var destination: String?
        /// The entity migration policy class: app code.
        public var policy: String?
    }

    /// An expression that needs app code, or that Decant cannot run at all.
    public struct AppCodeExpression: Encodable, Sendable {
        /// The entity mapping it belongs to.
        public var mapping: String
        /// The destination property it computes; nil for the mapping's source (FETCH) expression.
        public var property: String?
        /// The expression in NSExpression format syntax.
        public var expression: String
        /// The app classes it calls.
        public var classes: [String]
        /// Whether part of it has no Decant counterpart (the plan reports it as unsupported).
        public var unsupported: Bool
    }

    /// The mapping model's path as the user typed it.
    public var path: String
    public var source: Side
    public var destination: Side
    public var entityMappings: [EntityMapping]
    public var appCode: [AppCodeExpression]

    /// Describes `mapping`; with `bundle`, names the versions each side fits.
    public init(mapping: XcodeMappingModel, path: String, bundle: ModelBundle? = nil) {
        self.path = path
        func side(_ pairs: [(String?, Data?)], _ hashes: Set<Data>) -> Side {
            var named: [String: String] = [:]
            for case (let name?, let hash?) in pairs { named[name] = hash.base64EncodedString() }
            let versions = bundle.map { bundle in
                bundle.versions.filter { !hashes.isEmpty && hashes.isSubset(of: Set($0.entityVersionHashes.values)) }
                    .map { $0.versionName ?? bundle.name }
            }
            return Side(entityHashes: named, versions: versions)
        }
        source = side(
            mapping.entityMappings.map { ($0.sourceEntityName, $0.sourceEntityVersionHash) }, mapping.sourceEntityHashes)
        destination = side(
            mapping.entityMappings.map { ($0.destinationEntityName, $0.destinationEntityVersionHash) },
            mapping.destinationEntityHashes)
        entityMappings = mapping.entityMappings.map {
            EntityMapping(
                name: $0.name, kind: "\($0.type)", source: $0.sourceEntityName, destination: $0.destinationEntityName,
                policy: $0.migrationPolicyClassName.flatMap { $0.isEmpty ? nil : $0 })
        }
        var appCode: [AppCodeExpression] = []
        for entity in mapping.entityMappings {
            let policy = entity.migrationPolicyClassName.flatMap { $0.isEmpty ? nil : $0 }
            let properties = [(nil as String?, entity.sourceExpression)]
                + (entity.attributeMappings + entity.relationshipMappings).map { ($0.name as String?, $0.valueExpression) }
            for case (let property, let node?) in properties {
                let needs = XcodeMappingModel.appCode(of: node, policy: policy)
                guard !needs.classes.isEmpty || needs.unsupported else { continue }
                appCode.append(
                    AppCodeExpression(
                        mapping: entity.name, property: property, expression: node.description, classes: needs.classes,
                        unsupported: needs.unsupported))
            }
        }
        self.appCode = appCode
    }

    /// The report as text.
    public var text: String {
        var lines = ["\(path): mapping model, \(entityMappings.count) entity mappings"]
        for (label, side) in [("source", source), ("destination", destination)] {
            let versions = side.versions.map { $0.isEmpty ? " (no version of --model fits)" : " (version \($0.joined(separator: ", ")))" }
            lines.append("\(label)\(versions ?? ""):")
            for name in side.entityHashes.keys.sorted() { lines.append("  \(name)  \(side.entityHashes[name] ?? "")") }
        }
        lines.append("entity mappings:")
        for mapping in entityMappings {
            let from = mapping.source ?? "-"
            let to = mapping.destination ?? "-"
            let policy = mapping.policy.map { ", policy \($0)" } ?? ""
            lines.append("  \(mapping.name)  \(mapping.kind)  \(from) → \(to)\(policy)")
        }
        if appCode.isEmpty {
            lines.append("no expression needs app code")
        } else {
            lines.append("expressions that need app code:")
            for item in appCode {
                let needs = (item.classes.isEmpty ? [] : ["calls " + item.classes.joined(separator: ", ")])
                    + (item.unsupported ? ["no Decant counterpart"] : [])
                lines.append(
                    "  \(item.mapping).\(item.property ?? "(source)")  \(item.expression)  (\(needs.joined(separator: "; ")))")
            }
        }
        return lines.joined(separator: "\n")
    }
}
