import DecantCore
import DecantCodecs
import DecantFormats
public import Foundation

/// Small Xcode 3 models (`Foo.xcdatamodel/elements`) for tests, archived with the classes, buckets and stereotype
/// tags Xcode 3 wrote (coredata-formats.md 1.8; the class chains are copied from the corpus's RestKit model).
///
/// ```swift
/// let elements = try Xcode3ModelFiles.elements([
///     .init("Note", attributes: [.init("title", type: 700)],
///           relationships: [.init("folder", destination: "Folder", inverse: "notes")]),
///     .init("Folder", relationships: [.init("notes", destination: "Note", inverse: "folder", toMany: true)]),
/// ])
/// ```
public enum Xcode3ModelFiles {
    /// An attribute: its name, `NSAttributeType` code (700 String, 200 Integer 32, …) and settings.
    public struct Attribute: Sendable {
        public var name: String
        public var type: Int64
        public var isOptional: Bool
        public var isTransient: Bool
        public var defaultValue: String?
        public var versionHashModifier: String?
        public var renamingIdentifier: String?

        public init(
            _ name: String, type: Int64, optional: Bool = true, transient: Bool = false, defaultValue: String? = nil,
            versionHashModifier: String? = nil, renamingIdentifier: String? = nil
        ) {
            self.name = name
            self.type = type
            self.isOptional = optional
            self.isTransient = transient
            self.defaultValue = defaultValue
            self.versionHashModifier = versionHashModifier
            self.renamingIdentifier = renamingIdentifier
        }
    }

    /// A relationship. Counts default to what Xcode 3 wrote: `1, 1` for a to-one (optional or not), `0, 0` for a
    /// to-many; nil leaves the tag out, as early Xcode 3 releases did.
    public struct Relationship: Sendable {
        public var name: String
        public var destination: String
        public var inverse: String?
        public var isToMany: Bool
        public var isOptional: Bool
        public var minCount: Int64?
        public var maxCount: Int64?
        public var deleteRule: Int64

        public init(
            _ name: String, destination: String, inverse: String? = nil, toMany: Bool = false, optional: Bool = true,
            minCount: Int64? = nil, maxCount: Int64? = nil, deleteRule: Int64 = 1
        ) {
            self.name = name
            self.destination = destination
            self.inverse = inverse
            self.isToMany = toMany
            self.isOptional = optional
            self.minCount = minCount ?? (toMany ? 0 : 1)
            self.maxCount = maxCount ?? (toMany ? 0 : 1)
            self.deleteRule = deleteRule
        }
    }

    /// An entity.
    public struct Entity: Sendable {
        public var name: String
        public var className: String
        public var parent: String?
        public var isAbstract: Bool
        public var attributes: [Attribute]
        public var relationships: [Relationship]

        public init(
            _ name: String, className: String = "NSManagedObject", parent: String? = nil, abstract: Bool = false,
            attributes: [Attribute] = [], relationships: [Relationship] = []
        ) {
            self.name = name
            self.className = className
            self.parent = parent
            self.isAbstract = abstract
            self.attributes = attributes
            self.relationships = relationships
        }
    }

    static let chains: [String: [String]] = [
        "XDPMModel": ["XDPMModel", "XDModel", "NSObject"],
        "XDModelPackage": ["XDModelPackage", "XDUMLPackageImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp",
            "XDUMLElementImp", "NSObject"],
        "XDPMEntity": ["XDPMEntity", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp",
            "XDUMLElementImp", "NSObject"],
        "XDPMAttribute": ["XDPMAttribute", "XDPMProperty", "XDUMLPropertyImp", "XDUMLNamedElementImp", "XDUMLElementImp",
            "NSObject"],
        "XDPMRelationship": ["XDPMRelationship", "XDPMProperty", "XDUMLPropertyImp", "XDUMLNamedElementImp",
            "XDUMLElementImp", "NSObject"],
        "XDUMLStereotypeImp": ["XDUMLStereotypeImp", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp",
            "XDUMLNamedElementImp", "XDUMLElementImp", "NSObject"],
        "XDUMLPropertyImp": ["XDUMLPropertyImp", "XDUMLNamedElementImp", "XDUMLElementImp", "NSObject"],
        // Not in a sampled file (no sample has inheritance beside a store); the chain is a guess.
        "XDUMLGeneralizationImp": ["XDUMLGeneralizationImp", "XDUMLElementImp", "NSObject"],
    ]

    /// The `elements` archive of `entities` (binary property list).
    public static func elements(_ entities: [Entity], versionIdentifier: String? = nil) throws -> Data {
        var builder = Builder()
        let root = builder.archive(entities, versionIdentifier: versionIdentifier)
        return try builder.writer.encodedData(root: root)
    }

    /// Writes `name.xcdatamodel/elements` (and an empty `layout`, as Xcode 3 left one beside it) in `folder`.
    @discardableResult
    public static func write(
        _ name: String, entities: [Entity], versionIdentifier: String? = nil, in folder: URL
    ) throws -> URL {
        let model = folder.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try elements(entities, versionIdentifier: versionIdentifier).write(to: model.appendingPathComponent("elements"))
        try Data().write(to: model.appendingPathComponent("layout"))
        return model
    }

    struct Builder {
        var writer = KeyedArchiveWriter()

        mutating func object(_ reference: KeyedArchiveWriter.Reference, _ className: String, _ fields: PropertyListDictionary) {
            writer.setObject(reference, className: className, classes: Xcode3ModelFiles.chains[className], fields: fields)
        }

        mutating func dictionary(_ entries: [(String, PropertyListValue)]) -> PropertyListValue {
            writer.addDictionary(
                keys: entries.map { writer.addString($0.0).uid }, values: entries.map(\.1),
                className: "NSMutableDictionary"
            ).uid
        }

        mutating func value(_ value: PropertyListValue?) -> PropertyListValue {
            guard let value else { return KeyedArchiveWriter.null }
            return writer.addValue(value).uid
        }

        /// A stereotype named `name` owned by `owner`, whose tags have the given `_default`s: a reference (`.uid`) as
        /// it is, another value as an entry of its own (as Xcode 3 wrote them), nil as `$null`.
        mutating func stereotype(
            _ name: String, owner: KeyedArchiveWriter.Reference, tags: [(String, PropertyListValue?)]
        ) -> PropertyListValue {
            let stereotype = writer.reserveObject()
            var entries: [(String, PropertyListValue)] = []
            for (tag, tagValue) in tags {
                let stored: PropertyListValue
                if case .uid? = tagValue, let tagValue { stored = tagValue } else { stored = value(tagValue) }
                let property = writer.addObject(
                    className: "XDUMLPropertyImp", classes: Xcode3ModelFiles.chains["XDUMLPropertyImp"],
                    fields: ["_name": writer.addString(tag).uid, "_default": stored, "_owner": stereotype.uid])
                entries.append((tag, property.uid))
            }
            let owned = dictionary(entries)
            object(stereotype, "XDUMLStereotypeImp", [
                "_name": writer.addString(name).uid, "_owner": owner.uid, "XDBucketForOwnedAttributesstorage": owned,
                "XDBucketForOwnedAttributeswasEncoded": writer.addString("YES").uid,
            ])
            return stereotype.uid
        }

        mutating func propertyTags(optional: Bool, transient: Bool, modifier: String?, renaming: String?)
            -> [(String, PropertyListValue?)]
        {
            [
                ("XD_PPSK_isOptional", .bool(optional)), ("XD_PPSK_isTransient", .bool(transient)),
                ("XD_PPSK_isIndexed", .bool(false)), ("XD_PPSK_isSpotlightIndexed", .bool(false)),
                ("XD_PPSK_isStoredInTruthFile", .bool(false)),
                ("XD_PPSK_versionHashModifier", modifier.map(PropertyListValue.string)),
                ("XD_PPSK_elementID", renaming.map(PropertyListValue.string)),
            ]
        }

        mutating func archive(_ entities: [Entity], versionIdentifier: String?) -> KeyedArchiveWriter.Reference {
            let model = writer.reserveObject()
            let package = writer.reserveObject()
            var entityReferences: [String: KeyedArchiveWriter.Reference] = [:]
            for entity in entities { entityReferences[entity.name] = writer.reserveObject() }
            // Properties are reserved first so that inverses can point at each other.
            var propertyReferences: [String: KeyedArchiveWriter.Reference] = [:]
            for entity in entities {
                for property in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                    propertyReferences["\(entity.name).\(property)"] = writer.reserveObject()
                }
            }
            let parents = Dictionary(entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { first, _ in first })
            // The inverse relationship `name`, declared by `entity` or inherited from one of its parents.
            func inverse(named name: String, from entity: String) -> PropertyListValue? {
                var current: String? = entity
                var seen: Set<String> = []
                while let next = current, seen.insert(next).inserted {
                    if let reference = propertyReferences["\(next).\(name)"] { return reference.uid }
                    current = parents[next] ?? nil
                }
                return nil
            }
            for entity in entities {
                guard let reference = entityReferences[entity.name] else { continue }
                var owned: [(String, PropertyListValue)] = []
                for attribute in entity.attributes {
                    guard let property = propertyReferences["\(entity.name).\(attribute.name)"] else { continue }
                    let common = stereotype(
                        "XD_PPropStereotype", owner: property,
                        tags: propertyTags(
                            optional: attribute.isOptional, transient: attribute.isTransient,
                            modifier: attribute.versionHashModifier, renaming: attribute.renamingIdentifier))
                    let own = stereotype(
                        "XD_PAtt_Stereotype", owner: property,
                        tags: [
                            ("XD_PAttK_attributeType", .integer(attribute.type)),
                            ("XD_PAttK_defaultValueAsString", attribute.defaultValue.map(PropertyListValue.string)),
                        ])
                    object(property, "XDPMAttribute", [
                        "_name": writer.addString(attribute.name).uid, "_owner": reference.uid,
                        "XDBucketForStereotypesstorage": dictionary([("XD_PPropStereotype", common), ("XD_PAtt_Stereotype", own)]),
                    ])
                    owned.append((attribute.name, property.uid))
                }
                for relationship in entity.relationships {
                    guard let property = propertyReferences["\(entity.name).\(relationship.name)"] else { continue }
                    let common = stereotype(
                        "XD_PPropStereotype", owner: property,
                        tags: propertyTags(optional: relationship.isOptional, transient: false, modifier: nil, renaming: nil))
                    var tags: [(String, PropertyListValue?)] = [
                        ("XD_PRK_destination", entityReferences[relationship.destination]?.uid),
                        ("XD_PRK_inverseRelationship",
                            relationship.inverse.flatMap { inverse(named: $0, from: relationship.destination) }),
                        ("XD_PRK_isToMany", .bool(relationship.isToMany)),
                        ("XD_PRK_deleteRule", .integer(relationship.deleteRule)),
                    ]
                    if let minCount = relationship.minCount { tags.append(("XD_PRK_minCount", .integer(minCount))) }
                    if let maxCount = relationship.maxCount { tags.append(("XD_PRK_maxCount", .integer(maxCount))) }
                    let own = stereotype("XD_PR_Stereotype", owner: property, tags: tags)
                    object(property, "XDPMRelationship", [
                        "_name": writer.addString(relationship.name).uid, "_owner": reference.uid,
                        "XDBucketForStereotypesstorage": dictionary([("XD_PPropStereotype", common), ("XD_PR_Stereotype", own)]),
                    ])
                    owned.append((relationship.name, property.uid))
                }
                let entityTags = stereotype(
                    "XD_PStereotype", owner: reference,
                    tags: [
                        ("XD_PSK_entityClassName", .string(entity.className)), ("XD_PSK_isAbstract", .bool(entity.isAbstract)),
                        ("XD_PSK_versionHashModifier", nil), ("XD_PSK_elementID", nil),
                    ])
                var generalizations: [PropertyListValue] = []
                if let parent = entity.parent, let general = entityReferences[parent] {
                    generalizations.append(
                        writer.addObject(
                            className: "XDUMLGeneralizationImp", classes: Xcode3ModelFiles.chains["XDUMLGeneralizationImp"],
                            fields: ["_general": general.uid, "_specific": reference.uid]
                        ).uid)
                }
                let generalizationArray = writer.addArray(generalizations, className: "NSMutableArray").uid
                object(reference, "XDPMEntity", [
                    "_name": writer.addString(entity.name).uid, "_isAbstract": .bool(entity.isAbstract), "_owner": package.uid,
                    "XDBucketForOwnedAttributesstorage": dictionary(owned),
                    "XDBucketForStereotypesstorage": dictionary([("XD_PStereotype", entityTags)]),
                    "XDBucketForGeneralizationsstorage": generalizationArray,
                ])
            }
            let classes = dictionary(entities.compactMap { entity in entityReferences[entity.name].map { (entity.name, $0.uid) } })
            object(package, "XDModelPackage", [
                "_name": writer.addString("").uid, "_xd_owningModel": model.uid, "XDBucketForClassesstorage": classes,
            ])
            object(model, "XDPMModel", [
                "_xd_rootPackage": package.uid, "_xd_modelName": writer.addString("Test.xcdatamodel").uid,
                "_modelVersionIdentifier": versionIdentifier.map { writer.addString($0).uid } ?? KeyedArchiveWriter.null,
                "_configurationsByName": dictionary([]),
            ])
            return model
        }
    }
}
