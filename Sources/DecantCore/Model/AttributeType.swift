/// The type of an attribute, with the raw values of Core Data's `NSAttributeType`.
///
/// The raw values are stable: they appear in compiled models and in version hashes.
/// ```swift
/// AttributeType(modelName: "Integer 16")   // .integer16
/// AttributeType.string.rawValue            // 700
/// ```
public enum AttributeType: UInt, Sendable, Hashable, CaseIterable, Codable {
    case undefined = 0
    case integer16 = 100
    case integer32 = 200
    case integer64 = 300
    case decimal = 400
    case double = 500
    case float = 600
    case string = 700
    case boolean = 800
    case date = 900
    case binary = 1000
    case uuid = 1100
    case uri = 1200
    case transformable = 1800
    case objectID = 2000
    case composite = 2100

    /// The spelling used by Xcode's model editor in `contents` files (`attributeType="Integer 16"`).
    public var modelName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "Object ID"
        case .composite: "Composite"
        }
    }

    /// Creates a type from its model-editor spelling; `nil` for an unknown name.
    public init?(modelName: String) {
        guard let match = Self.allCases.first(where: { $0.modelName == modelName }) else { return nil }
        self = match
    }

    /// Whether values of this type are whole numbers (Boolean included, as SQLite stores it).
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: true
        default: false
        }
    }
}

/// What happens to related objects when an object is deleted (`NSDeleteRule`).
public enum DeleteRule: UInt, Sendable, Hashable, CaseIterable, Codable {
    case noAction = 0
    case nullify = 1
    case cascade = 2
    case deny = 3

    /// The spelling used in `contents` files (`deletionRule="Cascade"`).
    public var modelName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }

    /// Creates a rule from its model-editor spelling; `nil` for an unknown name.
    public init?(modelName: String) {
        guard let match = Self.allCases.first(where: { $0.modelName == modelName }) else { return nil }
        self = match
    }
}
