import DecantCore
import Foundation
import SwiftSyntax

/// What `@Attribute(…)` and `@Relationship(…)` say of one property.
struct PropertyOptions {
    var unique = false
    var externalStorage = false
    var preserveValueOnDeletion = false
    var allowsCloudEncryption = false
    var spotlight = false
    var ephemeral = false
    var transformer: String?
    var originalName: String?
    var hashModifier: String?
    var relationship: RelationshipOptions?

    struct RelationshipOptions {
        var deleteRule: DeleteRule = .nullify
        var inverse: (type: String, property: String)?
        var minimum: Int?
        var maximum: Int?
    }

    init(_ attributes: AttributeListSyntax, builder: SwiftModelBuilder, spot: SourceSpot) throws {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            switch attribute.name {
            case "Attribute":
                for argument in attribute.argumentList ?? [] {
                    try readAttributeArgument(argument, builder: builder, spot: spot)
                }
            case "Relationship":
                var options = RelationshipOptions()
                for argument in attribute.argumentList ?? [] {
                    try readRelationshipArgument(argument, into: &options, builder: builder, spot: spot)
                }
                relationship = options
            default: break
            }
        }
    }

    private mutating func readAttributeArgument(
        _ argument: LabeledExprSyntax, builder: SwiftModelBuilder, spot: SourceSpot
    ) throws {
        switch argument.label?.text {
        case "originalName"?: originalName = try Self.string(argument, builder: builder, spot: spot)
        case "hashModifier"?: hashModifier = try Self.string(argument, builder: builder, spot: spot)
        case nil:
            try readOption(argument.expression, builder: builder, spot: spot)
        case let label?:
            throw builder.refusal("@Attribute's argument \(label): is not one Decant knows", spot)
        }
    }

    private mutating func readOption(_ expression: ExprSyntax, builder: SwiftModelBuilder, spot: SourceSpot) throws {
        if let call = expression.as(FunctionCallExprSyntax.self),
            let member = call.calledExpression.as(MemberAccessExprSyntax.self),
            member.declName.baseName.text == "transformable"
        {
            // `.transformable(by: Transformer.self)` or `.transformable(by: "Name")`.
            guard let argument = call.arguments.first else {
                throw builder.refusal("@Attribute(.transformable) without a transformer", spot)
            }
            let text = argument.expression.trimmedDescription
            if let literal = argument.expression.as(StringLiteralExprSyntax.self), let value = Self.literal(literal) {
                transformer = value
            } else if text.hasSuffix(".self") {
                transformer = String(text.dropLast(5))
            } else {
                throw builder.refusal("@Attribute(.transformable(by: \(text))): expected a type or a name", spot)
            }
            return
        }
        let name = expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text
        switch name {
        case "unique"?: unique = true
        case "externalStorage"?: externalStorage = true
        case "preserveValueOnDeletion"?: preserveValueOnDeletion = true
        case "allowsCloudEncryption"?: allowsCloudEncryption = true
        case "spotlight"?: spotlight = true
        case "ephemeral"?: ephemeral = true
        default:
            throw builder.refusal("@Attribute option '\(expression.shortText)' is not one Decant knows", spot)
        }
    }

    private mutating func readRelationshipArgument(
        _ argument: LabeledExprSyntax, into options: inout RelationshipOptions, builder: SwiftModelBuilder,
        spot: SourceSpot
    ) throws {
        let expression = argument.expression
        switch argument.label?.text {
        case "deleteRule"?:
            switch expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text {
            case "nullify"?: options.deleteRule = .nullify
            case "cascade"?: options.deleteRule = .cascade
            case "deny"?: options.deleteRule = .deny
            case "noAction"?: options.deleteRule = .noAction
            default:
                throw builder.refusal("deleteRule '\(expression.shortText)' is not one of SwiftData's", spot)
            }
        case "inverse"?:
            guard let keyPath = expression.as(KeyPathExprSyntax.self), let root = keyPath.root,
                let property = SwiftModelBuilder.keyPathProperty(expression)
            else {
                throw builder.refusal(
                    "inverse '\(expression.shortText)': expected a key path such as \\Folder.notes", spot)
            }
            options.inverse = (root.trimmedDescription, property)
        case "minimumModelCount"?: options.minimum = try Self.integer(expression, builder: builder, spot: spot)
        case "maximumModelCount"?: options.maximum = try Self.integer(expression, builder: builder, spot: spot)
        case "originalName"?: originalName = try Self.string(argument, builder: builder, spot: spot)
        case "hashModifier"?: hashModifier = try Self.string(argument, builder: builder, spot: spot)
        case nil:
            throw builder.refusal("@Relationship option '\(expression.shortText)' is not one Decant knows", spot)
        case let label?:
            throw builder.refusal("@Relationship's argument \(label): is not one Decant knows", spot)
        }
    }

    static func literal(_ literal: StringLiteralExprSyntax) -> String? {
        guard literal.segments.count == 1, let segment = literal.segments.first?.as(StringSegmentSyntax.self) else {
            return literal.segments.isEmpty ? "" : nil
        }
        return segment.content.text
    }

    private static func string(_ argument: LabeledExprSyntax, builder: SwiftModelBuilder, spot: SourceSpot) throws
        -> String
    {
        guard let literal = argument.expression.as(StringLiteralExprSyntax.self), let value = Self.literal(literal)
        else {
            throw builder.refusal("\(argument.label?.text ?? "argument"): expected a string literal", spot)
        }
        return value
    }

    private static func integer(_ expression: ExprSyntax, builder: SwiftModelBuilder, spot: SourceSpot) throws -> Int {
        guard let literal = expression.as(IntegerLiteralExprSyntax.self),
            let value = Int(literal.literal.text.replacingOccurrences(of: "_", with: "")), value >= 0
        else {
            throw builder.refusal("expected a whole number, found '\(expression.shortText)'", spot)
        }
        return value
    }
}

extension SwiftModelBuilder {
    /// The attribute of a property that is not a relationship: a plain type, `[String]`/`[Data]`, or a composite.
    func attribute(
        _ property: StoredProperty, shape: TypeShape, entity: String, composites: inout [String: CompositeType],
        compositeOrder: inout [String]
    ) throws -> Attribute {
        let what = "\(entity).\(property.name)"
        switch shape.element {
        case .builtin(let name) where shape.isArray:
            guard name == "String" || name == "Data", !shape.isArrayElementOptional else {
                throw refusal(
                    "\(what) is an array of \(name); SwiftData's stores have shown only [String] and [Data] as "
                        + "top-level arrays (coredata-formats.md 12.3), so Decant does not guess how this one is "
                        + "stored",
                    property.spot)
            }
            var attribute = Attribute(name: property.name, type: .transformable, isOptional: shape.isOptional)
            attribute.valueClassName = "Array<\(name)>"
            attribute.valueTransformerName = "NSSecureUnarchiveFromData"
            return attribute
        case .builtin("Color.Resolved"):
            let elements = ["linearRed", "linearGreen", "linearBlue", "opacity"].map {
                Attribute(name: $0, type: .float, isOptional: false)
            }
            return register(
                CompositeType(name: "Color.Resolved", attributes: elements), property: property, shape: shape,
                entity: entity,
                composites: &composites, order: &compositeOrder)
        case .builtin(let name):
            var attribute = Attribute(
                name: property.name, type: Self.builtins[name] ?? .undefined, isOptional: shape.isOptional)
            attribute.defaultValue = property.initialValue.flatMap(Self.defaultText)
            return attribute
        case .declared(let decl):
            guard !shape.isArray else {
                throw refusal(
                    "\(what) is an array of \(decl.qualifiedName) values; whether SwiftData stores a top-level array "
                        + "of Codable values as Binary or Transformable is not known (coredata-formats.md 12.5), so "
                        + "Decant does not guess", property.spot)
            }
            let composite = try compositeType(decl, property: property.name, spot: property.spot, what: what)
            var attribute = register(
                composite.type, property: property, shape: shape, entity: entity, composites: &composites,
                order: &compositeOrder)
            attribute.userInfo = composite.userInfo
            return attribute
        }
    }

    /// Adds the composite type of `entity.property`, named `Entity.attribute` as the archived models' reader names
    /// each composite (every composite attribute its own type, as SwiftData archives them).
    private func register(
        _ composite: CompositeType, property: StoredProperty, shape: TypeShape, entity: String,
        composites: inout [String: CompositeType], order: inout [String]
    ) -> Attribute {
        var composite = composite
        composite.name = "\(entity).\(property.name)"
        if composites[composite.name] == nil { order.append(composite.name) }
        composites[composite.name] = composite
        var attribute = Attribute(name: property.name, type: .composite, isOptional: shape.isOptional)
        attribute.compositeName = composite.name
        attribute.valueClassName = "NSDictionary"
        return attribute
    }

    /// The default a literal initial value gives (12.4); other initial values (`UUID()`, `S()`, `[]`) give none here.
    static func defaultText(_ value: ExprSyntax) -> String? {
        if let literal = value.as(StringLiteralExprSyntax.self) { return PropertyOptions.literal(literal) }
        if let integer = value.as(IntegerLiteralExprSyntax.self) {
            return integer.literal.text.replacingOccurrences(of: "_", with: "")
        }
        if let real = value.as(FloatLiteralExprSyntax.self) {
            return real.literal.text.replacingOccurrences(of: "_", with: "")
        }
        if let bool = value.as(BooleanLiteralExprSyntax.self) { return bool.literal.text == "true" ? "YES" : "NO" }
        if let prefix = value.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
            let inner = defaultText(prefix.expression)
        {
            return "-" + inner
        }
        return nil
    }

    /// The composite a Codable enum or struct becomes (12.5), with the userInfo SwiftData gives the attribute.
    private func compositeType(
        _ decl: TypeDecl, property: String, spot: SourceSpot, what: String
    ) throws -> (type: CompositeType, userInfo: [String: UserInfoValue]) {
        let conformances = index.conformances(of: decl)
        let codable =
            conformances.contains { $0 == "Codable" || $0 == "Swift.Codable" }
            || (conformances.contains("Encodable") && conformances.contains("Decodable"))
        guard decl.kind == .enumType || decl.kind == .structType, codable else {
            throw refusal(
                "the type \(decl.qualifiedName) of \(what) is neither a @Model class nor a Codable enum or struct, "
                    + "so SwiftData cannot store it", spot)
        }
        if decl.kind == .structType {
            return (try structComposite(decl, what: what), [:])
        }
        var cases: [String] = []
        for member in decl.members {
            if member.decl.is(IfConfigDeclSyntax.self) {
                throw refusal(
                    "#if among the cases of \(decl.qualifiedName): Decant cannot tell which branch the "
                        + "app is built with", SourceSpot(file: decl.spot.file, node: Syntax(member.decl)))
            }
            guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in caseDecl.elements {
                if element.parameterClause != nil {
                    throw refusal(
                        "the enum \(decl.qualifiedName) of \(what) has a case with associated values "
                            + "(\(element.name.text)); how SwiftData stores those is not known (coredata-formats.md "
                            + "12.5), so Decant does not guess",
                        SourceSpot(file: decl.spot.file, node: Syntax(caseDecl)))
                }
                cases.append(element.name.text.replacingOccurrences(of: "`", with: ""))
            }
        }
        let rawTypes: [String: AttributeType] = ["String": .string, "Int": .integer64]
        let knownRaw = [
            "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double",
            "Float", "Character",
        ]
        if let raw = decl.inherited.first(where: { rawTypes[$0] != nil || knownRaw.contains($0) }) {
            guard let type = rawTypes[raw] else {
                throw refusal(
                    "the enum \(decl.qualifiedName) of \(what) has raw type \(raw); SwiftData's stores have shown only "
                        + "String and Int raw values (coredata-formats.md 12.5), so Decant does not guess", decl.spot)
            }
            let element = Attribute(name: property, type: type, isOptional: true)
            return (
                CompositeType(name: "\(decl.qualifiedName)(\(property))", attributes: [element]),
                ["EnumType": .bool(true)]
            )
        }
        guard !cases.isEmpty else {
            throw refusal("the enum \(decl.qualifiedName) of \(what) has no cases", decl.spot)
        }
        let elements = cases.map { Attribute(name: $0, type: .string, isOptional: true) }
        return (
            CompositeType(name: decl.qualifiedName, attributes: elements),
            ["EnumType": .bool(true), "enum": .array(cases.map { .string($0) })]
        )
    }

    /// A Codable struct: one optional element per stored property, arrays of Codable values as Binary (12.5).
    private func structComposite(_ decl: TypeDecl, what: String) throws -> CompositeType {
        let (properties, _) = try storedProperties(of: decl, isModel: false)
        guard !properties.isEmpty else {
            throw refusal("the struct \(decl.qualifiedName) of \(what) has no stored properties", decl.spot)
        }
        var elements: [Attribute] = []
        for member in properties {
            let memberWhat = "\(decl.qualifiedName).\(member.name) (inside \(what))"
            let scope = decl.scope + [decl.simpleName]
            let shape: TypeShape
            if let type = member.type {
                shape = try self.shape(of: type, scope: scope, spot: member.spot, what: memberWhat)
            } else if let value = member.initialValue {
                shape = try inferredType(value, scope: scope, spot: member.spot, what: memberWhat)
            } else {
                throw refusal("\(memberWhat) has neither a type annotation nor an initial value", member.spot)
            }
            switch shape.element {
            case .declared(let inner) where shape.isArray && (inner.kind == .structType || inner.kind == .enumType):
                elements.append(Attribute(name: member.name, type: .binary, isOptional: true))
            case .builtin(let name) where !shape.isArray && name != "Date" && name != "Color.Resolved":
                elements.append(Attribute(name: member.name, type: Self.builtins[name] ?? .undefined, isOptional: true))
            default:
                throw refusal(
                    "\(memberWhat) is a '\(member.type?.trimmedDescription ?? "value")' inside a struct stored as a "
                        + "composite; SwiftData's stores have shown only plain values and arrays of Codable values "
                        + "there (coredata-formats.md 12.5: structs, enums and dates inside structs are not known), so "
                        + "Decant does not guess", member.spot)
            }
        }
        return CompositeType(name: decl.qualifiedName, attributes: elements)
    }
}
