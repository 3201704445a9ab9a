public import Foundation
import Crypto

/// Core Data's version hashes, computed exactly as Apple computes them (SHA-256 over names, flags, types and
/// the hashes of the parts; see `coredata-formats.md` section 8 and its corrections).
///
/// ```swift
/// let hashes = model.entityVersionHashes          // ["Note": <32 bytes>, …]
/// let checksum = model.versionChecksum            // base64 SHA-256 over the hashes in name order
/// ```
extension ObjectModel {
    /// Every entity's version hash, by entity name (`NSStoreModelVersionHashes`).
    public var entityVersionHashes: [String: Data] {
        var memo: [String: Data] = [:]
        let byName = entitiesByName
        for entity in entities { _ = versionHash(of: entity, byName: byName, memo: &memo, visiting: []) }
        return memo
    }

    /// The version hash of one entity.
    public func versionHash(of entityName: String) -> Data? {
        guard let entity = entity(named: entityName) else { return nil }
        var memo: [String: Data] = [:]
        return versionHash(of: entity, byName: entitiesByName, memo: &memo, visiting: [])
    }

    /// The entities by name (the first of a name, as ``entity(named:)`` finds it), so that walking a deep
    /// inheritance chain looks each parent up once rather than scanning every entity at every level.
    private var entitiesByName: [String: Entity] {
        Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The model checksum (`versionChecksum`, `NSStoreModelVersionChecksumKey`): base64 of SHA-256 over the
    /// entity hashes in ascending entity-name order.
    public var versionChecksum: String {
        Self.versionChecksum(of: entityVersionHashes)
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity name followed by its hash,
    /// in ascending name order.
    public var versionHashesDigest: String {
        Self.versionHashesDigest(of: entityVersionHashes)
    }

    /// The checksum of a set of entity hashes, as ``versionChecksum`` computes it.
    public static func versionChecksum(of hashes: [String: Data]) -> String {
        var hasher = SHA256()
        for name in hashes.keys.sorted(by: VersionHashing.precedes) { hasher.update(data: hashes[name] ?? Data()) }
        return Data(hasher.finalize()).base64EncodedString()
    }

    /// The digest of a set of entity hashes, as ``versionHashesDigest`` computes it.
    public static func versionHashesDigest(of hashes: [String: Data]) -> String {
        var hasher = SHA512()
        for name in hashes.keys.sorted(by: VersionHashing.precedes) {
            hasher.update(data: Data(name.utf8))
            hasher.update(data: hashes[name] ?? Data())
        }
        return Data(hasher.finalize()).base64EncodedString()
    }

    /// The version hash of one property as it appears in `entity` (inherited properties included).
    public func versionHash(ofProperty name: String, in entityName: String) -> Data? {
        propertyVersionHashes(of: entityName)[name]
    }

    /// The version hash of each property of `entityName` (inherited properties included), by property name: which
    /// of them an edit that changed the entity's hash changed. Empty for an entity the model does not have.
    public func propertyVersionHashes(of entityName: String) -> [String: Data] {
        guard let entity = entity(named: entityName) else { return [:] }
        let (attributes, relationships) = properties(of: entity)
        var hashes: [String: Data] = [:]
        for attribute in attributes { hashes[attribute.name] = versionHash(of: attribute) }
        for relationship in relationships {
            hashes[relationship.name] = VersionHashing.hash(of: relationship, isOwnInverse: isOwnInverse(relationship, in: entity))
        }
        return hashes
    }

    private func versionHash(
        of entity: Entity, byName: [String: Entity], memo: inout [String: Data], visiting: Set<String>
    ) -> Data {
        if let known = memo[entity.name] { return known }
        var hasher = SHA256()
        hasher.update(data: Data(entity.name.utf8))
        hasher.update(data: [entity.isAbstract ? 1 : 0])
        let parentOf = { (entity: Entity) in entity.parentName.flatMap { byName[$0] } }
        if let parent = parentOf(entity), !visiting.contains(parent.name) {
            var deeper = visiting
            deeper.insert(entity.name)
            hasher.update(data: versionHash(of: parent, byName: byName, memo: &memo, visiting: deeper))
        }
        let ancestors = ancestors(of: entity, parent: parentOf)
        let (attributes, relationships) = properties(of: entity, ancestors: ancestors)
        var propertyHashes: [(name: String, hash: Data)] = []
        for attribute in attributes where !attribute.isTransient {
            propertyHashes.append((attribute.name, versionHash(of: attribute)))
        }
        // The top-most declaration of each relationship name, found in one walk up the chain.
        var topDeclarations: [String: (entity: Entity, relationship: Relationship)] = [:]
        for declaring in [entity] + ancestors {
            for declared in declaring.relationships { topDeclarations[declared.name] = (declaring, declared) }
        }
        for relationship in relationships where !relationship.isTransient {
            let top = topDeclarations[relationship.name]
            let own = Self.isOwnInverse(top?.relationship ?? relationship, declaredIn: top?.entity ?? entity)
            propertyHashes.append((relationship.name, VersionHashing.hash(of: relationship, isOwnInverse: own)))
        }
        propertyHashes.sort { VersionHashing.precedes($0.name, $1.name) }
        for property in propertyHashes { hasher.update(data: property.hash) }
        if let modifier = entity.versionHashModifier { hasher.update(data: Data(modifier.utf8)) }
        let constraints = entity.uniquenessConstraints.map { $0.joined(separator: ".") }.sorted(by: VersionHashing.precedes)
        for constraint in constraints where !constraint.isEmpty { hasher.update(data: Data(constraint.utf8)) }
        let hash = Data(hasher.finalize())
        memo[entity.name] = hash
        return hash
    }

    /// An attribute's hash; a composite attribute's is the composite rule (12.9) over the elements of the
    /// composite type it names (none when the model lacks that type).
    private func versionHash(of attribute: Attribute) -> Data {
        guard attribute.type == .composite, attribute.derivation == nil else { return VersionHashing.hash(of: attribute) }
        let composite = composites.first { $0.name == attribute.compositeName }
        return VersionHashing.hash(ofCompositeElements: composite?.attributes ?? [])
    }

    /// Whether a relationship is its own inverse, judged on the top-most ancestor that declares it.
    private func isOwnInverse(_ relationship: Relationship, in entity: Entity) -> Bool {
        let declaring = ([entity] + ancestors(of: entity)).last { candidate in
            candidate.relationships.contains { $0.name == relationship.name }
        } ?? entity
        guard let top = declaring.relationships.first(where: { $0.name == relationship.name }) else { return false }
        return Self.isOwnInverse(top, declaredIn: declaring)
    }

    /// Whether `top`, the top-most declaration of a relationship (in `declaring`), names itself as its inverse.
    private static func isOwnInverse(_ top: Relationship, declaredIn declaring: Entity) -> Bool {
        guard let inverse = top.inverseName, inverse == top.name else { return false }
        let inverseEntity = top.inverseEntity ?? top.destinationEntity
        return inverseEntity == nil || inverseEntity == declaring.name
    }
}

/// The byte-level pieces of the version-hash algorithm.
package enum VersionHashing {
    /// `NSString compare:` without options: ordinal over UTF-16 code units.
    package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    /// The property base hash (8.1).
    package static func baseHash(of common: PropertyCommon) -> Data {
        var hasher = SHA256()
        hasher.update(data: Data(common.name.utf8))
        let flags: UInt16 =
            (common.isOptional ? 1 : 0) | (common.isTransient ? 2 : 0) | (common.isReadOnly ? 4 : 0)
        hasher.update(data: littleEndian(flags))
        if let modifier = common.versionHashModifier { hasher.update(data: Data(modifier.utf8)) }
        return Data(hasher.finalize())
    }

    /// The attribute hash (8.2; derived attributes per 2.5).
    package static func hash(of attribute: Attribute) -> Data {
        var hasher = SHA256()
        if let derivation = attribute.derivation {
            hasher.update(data: Data(derivation.expression.utf8))
            if let filter = derivation.filteringPredicate { hasher.update(data: Data(filter.utf8)) }
            return Data(hasher.finalize())
        }
        hasher.update(data: baseHash(of: attribute.common))
        hasher.update(data: littleEndian(UInt32(truncatingIfNeeded: attribute.type.rawValue)))
        if attribute.allowsExternalBinaryDataStorage { hasher.update(data: [1]) }
        if attribute.preservesValueInHistoryOnDeletion { hasher.update(data: [1]) }
        return Data(hasher.finalize())
    }

    /// A composite attribute's hash (8, 12.9): SHA-256 over its elements' attribute hashes (8.2, each with its
    /// own name, optional flag and type) in element-name order. Nothing of the composite itself (its name,
    /// flags or type 2100) is fed.
    package static func hash(ofCompositeElements elements: [Attribute]) -> Data {
        var hasher = SHA256()
        for element in elements.sorted(by: { precedes($0.name, $1.name) }) { hasher.update(data: hash(of: element)) }
        return Data(hasher.finalize())
    }

    /// The relationship hash (8.3 with its corrections).
    package static func hash(of relationship: Relationship, isOwnInverse: Bool) -> Data {
        var hasher = SHA256()
        hasher.update(data: baseHash(of: relationship.common))
        if let destination = relationship.destinationEntity { hasher.update(data: Data(destination.utf8)) }
        if let inverse = relationship.inverseName, !isOwnInverse { hasher.update(data: Data(inverse.utf8)) }
        hasher.update(data: littleEndian(Int32(truncatingIfNeeded: relationship.maxCount)))
        hasher.update(data: littleEndian(Int32(truncatingIfNeeded: relationship.minCount)))
        if relationship.isOrdered { hasher.update(data: [1, 0]) }
        return Data(hasher.finalize())
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }
}
