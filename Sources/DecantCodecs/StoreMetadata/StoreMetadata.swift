public import DecantCore
public import Foundation

/// The `Z_METADATA` row of a Core Data SQLite store: the store UUID and the metadata dictionary
/// (store type, framework version, entity version hashes, identifiers, app keys).
public struct StoreMetadata: Sendable, Hashable {
    /// `Z_UUID`, the store's `NSStoreUUID`.
    public var storeUUID: String
    /// The whole `Z_PLIST` dictionary, app keys included.
    public var plist: PropertyListDictionary

    /// Creates metadata.
    public init(storeUUID: String, plist: PropertyListDictionary) {
        self.storeUUID = storeUUID
        self.plist = plist
    }

    /// `NSStoreType` (`SQLite`).
    public var storeType: String? { plist["NSStoreType"]?.stringValue }
    /// `NSPersistenceFrameworkVersion`, the Core Data build that wrote the store.
    public var frameworkVersion: Int? { plist["NSPersistenceFrameworkVersion"]?.integerValue.map(Int.init) }
    /// `NSStoreModelVersionHashes`: entity name → 32-byte hash.
    public var entityVersionHashes: [String: Data] {
        var hashes: [String: Data] = [:]
        for (name, value) in plist["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
            if let data = value.dataValue { hashes[name] = data }
        }
        return hashes
    }
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String] {
        plist["NSStoreModelVersionIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
    /// `NSStoreModelVersionHashesDigest`, when present.
    public var versionHashesDigest: String? { plist["NSStoreModelVersionHashesDigest"]?.stringValue }
    /// `NSStoreModelVersionChecksumKey`, when present.
    public var versionChecksum: String? { plist["NSStoreModelVersionChecksumKey"]?.stringValue }

    /// The metadata Core Data writes for a fresh store of `model`.
    public static func fresh(
        for model: ObjectModel, frameworkVersion: Int,
        storeUUID: String = UUID().uuidString.uppercased()
    ) -> Self {
        let hashes = model.entityVersionHashes
        var hashDictionary = PropertyListDictionary()
        for name in hashes.keys.sorted() { hashDictionary[name] = .data(hashes[name] ?? Data()) }
        let plist: PropertyListDictionary = [
            "NSPersistenceFrameworkVersion": .integer(Int64(frameworkVersion)),
            "NSStoreModelVersionChecksumKey": .string(ObjectModel.versionChecksum(of: hashes)),
            "NSStoreModelVersionHashes": .dictionary(hashDictionary),
            "NSStoreModelVersionHashesDigest": .string(ObjectModel.versionHashesDigest(of: hashes)),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array(model.versionIdentifiers.map { .string($0) }),
            "NSStoreType": .string("SQLite"),
            "_NSAutoVacuumLevel": .string("2"),
        ]
        return StoreMetadata(storeUUID: storeUUID, plist: plist)
    }
}
