/// An attribute of an entity (`NSAttributeDescription`), with everything a model source can say of it.
///
/// ```swift
/// var title = Attribute(name: "title", type: .string)
/// title.isOptional = true
/// ```
@dynamicMemberLookup
public struct Attribute: Sendable, Hashable {
    /// Name, flags, identifiers and user info.
    public var common: PropertyCommon
    /// The attribute type.
    public var type: AttributeType {
        didSet { parsedDefault = ParsedDefault(parsed: AttributeDefault(parsing: defaultValue, as: type)) }
    }
    /// The default value as the model states it: `defaultValueString` text, or for a date the
    /// `defaultDateTimeInterval` number. `nil` when there is none. Kept as written, for writers that reproduce
    /// the model source; ``defaultLiteral`` is the value it parses to (``AttributeDefault``).
    public var defaultValue: String? {
        didSet { parsedDefault = ParsedDefault(parsed: AttributeDefault(parsing: defaultValue, as: type)) }
    }
    /// ``defaultValue`` parsed for ``type``, once, whenever either is set.
    var parsedDefault = ParsedDefault(parsed: .none)
    /// `minValueString` (numbers; for strings the minimum length).
    public var minValue: String?
    /// `maxValueString`.
    public var maxValue: String?
    /// `minDateTimeInterval`, seconds since 2001-01-01.
    public var minDate: Double?
    /// `maxDateTimeInterval`, seconds since 2001-01-01.
    public var maxDate: Double?
    /// `regularExpressionString`.
    public var regularExpression: String?
    /// `valueTransformerName` for transformable attributes.
    public var valueTransformerName: String?
    /// `customClassName` (codegen class), or the archived `NSAttributeValueClassName`.
    public var valueClassName: String?
    /// `allowsExternalBinaryDataStorage="YES"`: part of the version hash.
    public var allowsExternalBinaryDataStorage: Bool
    /// `preserveAfterDeletion="YES"`: part of the version hash.
    public var preservesValueInHistoryOnDeletion: Bool
    /// `allowsCloudEncryption="YES"`.
    public var allowsCloudEncryption: Bool
    /// `usesScalarValueType` (codegen only).
    public var usesScalarValueType: Bool?
    /// For a `Composite` attribute, the name of its composite type.
    public var compositeName: String?
    /// Set for a derived attribute (`NSDerivedAttributeDescription`).
    public var derivation: Derivation?

    /// Creates an attribute.
    public init(name: String, type: AttributeType, isOptional: Bool = false, isTransient: Bool = false) {
        self.common = PropertyCommon(name: name, isOptional: isOptional, isTransient: isTransient)
        self.type = type
        self.allowsExternalBinaryDataStorage = false
        self.preservesValueInHistoryOnDeletion = false
        self.allowsCloudEncryption = false
    }

    /// Reads and writes the common fields directly: `attribute.name`, `attribute.isOptional`.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<PropertyCommon, T>) -> T {
        get { common[keyPath: keyPath] }
        set { common[keyPath: keyPath] = newValue }
    }
}

/// How a derived attribute is computed.
public struct Derivation: Sendable, Hashable {
    /// The derivation expression in `NSExpression.description` form (`count:(items)`), which is what
    /// Core Data hashes. A model source's spelling (`items.@count`) is normalised to this form.
    public var expression: String
    /// The expression as the model source spelled it, when it came from a source file.
    public var sourceExpression: String?
    /// The filtering predicate's format, when there is one.
    public var filteringPredicate: String?

    /// Creates a derivation.
    public init(expression: String, sourceExpression: String? = nil, filteringPredicate: String? = nil) {
        self.expression = expression
        self.sourceExpression = sourceExpression
        self.filteringPredicate = filteringPredicate
    }
}
