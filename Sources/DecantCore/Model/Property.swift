/// What every kind of property has: name, flags, identifiers and user info.
///
/// `Attribute`, `Relationship` and `FetchedProperty` each hold one of these as `common`
/// and expose its fields directly.
public struct PropertyCommon: Sendable, Hashable {
    /// The property name.
    public var name: String
    /// `optional="YES"`.
    public var isOptional: Bool
    /// `transient="YES"`: not persisted, no column, not in the entity hash.
    public var isTransient: Bool
    /// Read-only (only models built in code, and derived attributes, set this).
    public var isReadOnly: Bool
    /// The renaming identifier (`elementID`); `nil` means the name.
    public var renamingIdentifier: String?
    /// The version hash modifier, fed into the property hash when present.
    public var versionHashModifier: String?
    /// User info (strings only in model sources; compiled models may hold any property-list value, kept as it is).
    public var userInfo: [String: UserInfoValue]
    /// `indexed="YES"` (deprecated before iOS 11, still honoured).
    public var isIndexed: Bool
    /// `spotlightIndexingEnabled="YES"`.
    public var isIndexedBySpotlight: Bool
    /// `storedInTruthFile="YES"` (`storedInExternalRecord`).
    public var isStoredInExternalRecord: Bool
    /// `syncable="YES"` (legacy, no effect).
    public var isSyncable: Bool
    /// Validation predicates as format strings, with their warnings (from compiled models).
    public var validationPredicates: [String]
    /// The warnings paired with ``validationPredicates``, each kept as the compiled model holds it: a string in
    /// older models, the Cocoa error code of the predicate (`1620` = `NSValidationNumberTooSmallError`, section 1.9)
    /// in newer ones.
    public var validationWarnings: [UserInfoValue]

    /// Creates the common part of a property.
    public init(
        name: String,
        isOptional: Bool = false,
        isTransient: Bool = false,
        isReadOnly: Bool = false,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: UserInfoValue] = [:],
        isIndexed: Bool = false,
        isIndexedBySpotlight: Bool = false,
        isStoredInExternalRecord: Bool = false,
        isSyncable: Bool = false,
        validationPredicates: [String] = [],
        validationWarnings: [UserInfoValue] = []
    ) {
        self.name = name
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.isIndexed = isIndexed
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.isStoredInExternalRecord = isStoredInExternalRecord
        self.isSyncable = isSyncable
        self.validationPredicates = validationPredicates
        self.validationWarnings = validationWarnings
    }

    /// The identifier migrations pair properties by: the renaming identifier, else the name.
    public var canonicalName: String { renamingIdentifier ?? name }
}
