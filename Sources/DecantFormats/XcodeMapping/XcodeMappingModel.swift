public import DecantCore
public import Foundation
import DecantCodecs

/// An Xcode mapping model as Core Data's `NSMappingModel` holds it: read from a compiled `.cdm`, or from a
/// `.xcmappingmodel` compiled the way Xcode's mapping compiler does (coredata-formats.md 3.4.2), so both give the same
/// value for the same mapping.
///
/// ```swift
/// let model = try XcodeMappingModel(contentsOf: url, source: v2, destination: v3)
/// for mapping in model.entityMappings { print(mapping.name, mapping.type) }   // CarToCar custom
/// ```
public struct XcodeMappingModel: Sendable, Hashable {
    /// The file it was read from, as the user named it.
    public var path: String
    /// The project-relative path of the source `.xcdatamodel` (`.xcmappingmodel` only).
    public var sourceModelPath: String?
    /// The project-relative path of the destination `.xcdatamodel` (`.xcmappingmodel` only).
    public var destinationModelPath: String?
    /// The source model snapshot embedded in a `.xcmappingmodel` (`XDPMModel`), when it decodes.
    public var sourceModel: ObjectModel?
    /// The destination model snapshot embedded in a `.xcmappingmodel`, when it decodes.
    public var destinationModel: ObjectModel?
    /// The entity mappings in `mappingnumber` order.
    public var entityMappings: [XcodeEntityMapping]

    public init(
        path: String,
        sourceModelPath: String? = nil,
        destinationModelPath: String? = nil,
        sourceModel: ObjectModel? = nil,
        destinationModel: ObjectModel? = nil,
        entityMappings: [XcodeEntityMapping]
    ) {
        self.path = path
        self.sourceModelPath = sourceModelPath
        self.destinationModelPath = destinationModelPath
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.entityMappings = entityMappings
    }

    /// The non-nil source entity version hashes of its entity mappings (the set `s` of 3.3).
    public var sourceEntityHashes: Set<Data> { Set(entityMappings.compactMap(\.sourceEntityVersionHash)) }
    /// The non-nil destination entity version hashes of its entity mappings (the set `d` of 3.3).
    public var destinationEntityHashes: Set<Data> { Set(entityMappings.compactMap(\.destinationEntityVersionHash)) }
}

/// `NSEntityMapping`.
public struct XcodeEntityMapping: Sendable, Hashable {
    /// `NSEntityMappingType`.
    public enum MappingType: Int, Sendable, Hashable, Codable {
        case undefined = 0
        case custom = 1
        case add = 2
        case remove = 3
        case copy = 4
        case transform = 5
    }

    /// `NSMappingName`: `CarToCar`, or the entity's name for Add/Remove.
    public var name: String
    /// `NSMappingType`.
    public var type: MappingType
    /// `NSSourceEntityName` (nil for Add).
    public var sourceEntityName: String?
    /// `NSDestinationEntityName` (nil for Remove).
    public var destinationEntityName: String?
    /// `NSSourceEntityVersionHash` (32 bytes).
    public var sourceEntityVersionHash: Data?
    /// `NSDestinationEntityVersionHash` (32 bytes).
    public var destinationEntityVersionHash: Data?
    /// `NSSourceExpression`: the FETCH of the source objects (nil for Add).
    public var sourceExpression: NSExpressionNode?
    /// `NSEntityMigrationPolicyClassName` (nil or empty: none).
    public var migrationPolicyClassName: String?
    /// `NSAttributeMappings`, sorted by destination property name.
    public var attributeMappings: [XcodePropertyMapping]
    /// `NSRelationshipMappings`, sorted by destination property name.
    public var relationshipMappings: [XcodePropertyMapping]
    /// `NSUserInfo`, string values only.
    public var userInfo: [String: String]

    public init(
        name: String,
        type: MappingType,
        sourceEntityName: String?,
        destinationEntityName: String?,
        sourceEntityVersionHash: Data? = nil,
        destinationEntityVersionHash: Data? = nil,
        sourceExpression: NSExpressionNode? = nil,
        migrationPolicyClassName: String? = nil,
        attributeMappings: [XcodePropertyMapping] = [],
        relationshipMappings: [XcodePropertyMapping] = [],
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.sourceEntityName = sourceEntityName
        self.destinationEntityName = destinationEntityName
        self.sourceEntityVersionHash = sourceEntityVersionHash
        self.destinationEntityVersionHash = destinationEntityVersionHash
        self.sourceExpression = sourceExpression
        self.migrationPolicyClassName = migrationPolicyClassName
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.userInfo = userInfo
    }
}

/// `NSPropertyMapping`: a destination property and its value expression (nil: no value).
public struct XcodePropertyMapping: Sendable, Hashable {
    /// `NSDestinationPropertyName`.
    public var name: String
    /// `NSValueExpression`.
    public var valueExpression: NSExpressionNode?

    public init(name: String, valueExpression: NSExpressionNode?) {
        self.name = name
        self.valueExpression = valueExpression
    }
}

/// An `NSExpression` as archived in mapping models (coredata-formats.md 3.2 and 3.4.3), printed in `NSExpression`'s
/// own format syntax by ``description``.
///
/// ```swift
/// print(node)   // FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)
/// ```
public indirect enum NSExpressionNode: Sendable, Hashable, CustomStringConvertible {
    /// Type 0: a constant (`nil` when the archive has no `NSConstantValue`).
    case constant(Value)
    /// Type 0 with `NSConstantValueClassName`: a class object (`_NSPredicateUtilities`, an app's class).
    case classConstant(String)
    /// Type 1: `SELF`.
    case evaluatedObject
    /// Type 2: `$name`.
    case variable(String)
    /// Type 3 or 10: a key path (`a.b`, `@distinctUnionOfSets` included).
    case keyPath(String)
    /// Type 4: `FUNCTION(operand, "selector", arguments…)`; `$source.a.b` is `valueForKeyPath:` on `$source`.
    case function(operand: NSExpressionNode, selector: String, arguments: [NSExpressionNode])
    /// Type 50: `FETCH(request, context, countOnly)`.
    case fetch(request: NSExpressionNode, context: NSExpressionNode, countOnly: Bool)

    public var description: String {
        switch self {
        case .constant(let value):
            switch value {
            case .null: return "nil"
            case .string(let text): return "\"\(text.replacingOccurrences(of: "\"", with: "\\\""))\""
            case .bool(let flag): return flag ? "YES" : "NO"
            default: return value.text ?? "nil"
            }
        case .classConstant(let name): return "<\(name)>"
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$\(name)"
        case .keyPath(let path): return path
        case .function(let operand, let selector, let arguments):
            if selector == "valueForKeyPath:", arguments.count == 1, case .keyPath(let path) = arguments[0] {
                return "\(operand).\(path)"
            }
            if selector == "castObject:toType:", case .classConstant = operand, arguments.count == 2 {
                return "CAST(\(arguments[0]), \(arguments[1]))"
            }
            return "FUNCTION(" + ([operand.description, "\"\(selector)\""] + arguments.map(\.description))
                .joined(separator: ", ") + ")"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(request), \(context), \(countOnly ? "YES" : "NO"))"
        }
    }
}
