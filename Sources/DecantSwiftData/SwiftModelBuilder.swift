import DecantCore
import Foundation
import SwiftSyntax

/// Builds the Core Data entities SwiftData compiles `@Model` classes into (`coredata-formats.md` 12.2–12.9).
struct SwiftModelBuilder {
    typealias TypeDecl = SwiftSourceIndex.TypeDecl

    let index: SwiftSourceIndex

    // MARK: Types

    /// A property's Swift type with its optionality and array-ness taken off.
    struct TypeShape {
        var isOptional = false
        var isArray = false
        var isArrayElementOptional = false
        var element: Named

        enum Named {
            /// A type the files declare.
            case declared(TypeDecl)
            /// A Swift, Foundation or SwiftUI type SwiftData stores, by its canonical name (`String`,
            /// `Color.Resolved`).
            case builtin(String)
        }
    }

    /// The standard types SwiftData stores as plain attributes, by spelling.
    static let builtins: [String: AttributeType] = [
        "String": .string, "Int": .integer64, "Int64": .integer64, "Int32": .integer32, "Int16": .integer16,
        "Double": .double, "Float": .float, "Bool": .boolean, "UUID": .uuid, "Data": .binary, "Date": .date,
        "Decimal": .decimal, "URL": .uri,
    ]

    static func builtinName(_ spelling: String) -> String? {
        var name = spelling
        for module in ["Swift.", "Foundation.", "SwiftUI."] where name.hasPrefix(module) {
            name.removeFirst(module.count)
        }
        if name == "Color.Resolved" || builtins[name] != nil { return name }
        return nil
    }

    /// Takes a type apart: optional, array, and the named type inside, following type aliases the files define.
    func shape(of type: TypeSyntax, scope: [String], spot: SourceSpot, what: String, depth: Int = 0) throws -> TypeShape
    {
        guard depth < 16 else {
            throw refusal("the type alias chain of \(what) is longer than 16 steps (or loops)", spot)
        }
        if let optional = type.as(OptionalTypeSyntax.self) {
            return try optionalShape(optional.wrappedType, scope: scope, spot: spot, what: what, depth: depth)
        }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return try optionalShape(optional.wrappedType, scope: scope, spot: spot, what: what, depth: depth)
        }
        if let array = type.as(ArrayTypeSyntax.self) {
            return try arrayShape(array.element, scope: scope, spot: spot, what: what, depth: depth)
        }
        if type.is(DictionaryTypeSyntax.self) {
            throw refusal(
                "\(what) is a dictionary; how SwiftData stores dictionaries is not known from real stores "
                    + "(coredata-formats.md 12.3), so Decant does not guess; use a Codable struct", spot)
        }
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return try shape(of: attributed.baseType, scope: scope, spot: spot, what: what, depth: depth)
        }
        let spelling: String
        var generic: [TypeSyntax] = []
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            spelling = identifier.name.text
            generic = identifier.genericArgumentClause?.arguments.compactMap { Self.typeArgument($0) } ?? []
        } else if let member = type.as(MemberTypeSyntax.self), member.genericArgumentClause == nil {
            spelling = member.trimmedDescription
        } else {
            throw refusal("Decant cannot read the type of \(what) ('\(type.shortText)')", spot)
        }
        if spelling == "Optional" || spelling == "Swift.Optional", generic.count == 1 {
            return try optionalShape(generic[0], scope: scope, spot: spot, what: what, depth: depth)
        }
        if spelling == "Array" || spelling == "Swift.Array", generic.count == 1 {
            return try arrayShape(generic[0], scope: scope, spot: spot, what: what, depth: depth)
        }
        if !generic.isEmpty {
            throw refusal("\(what) has a generic type ('\(type.shortText)') SwiftData does not store", spot)
        }
        switch index.resolve(spelling, from: scope) {
        case .type(let decl):
            return TypeShape(element: .declared(decl))
        case .alias(let alias):
            return try shape(of: alias.target, scope: alias.scope, spot: spot, what: what, depth: depth + 1)
        case .conditional(let declared):
            throw refusal(
                "the type '\(spelling)' of \(what) is declared inside an #if branch (\(declared.location)); Decant "
                    + "cannot tell which branch the app is built with: declare it outside #if", spot)
        case .unknown:
            if let builtin = Self.builtinName(spelling) { return TypeShape(element: .builtin(builtin)) }
            throw refusal(
                "the type '\(spelling)' of \(what) is not declared in the files given (another module?); give the "
                    + "file that defines it too", spot)
        }
    }

    private static func typeArgument(_ argument: GenericArgumentSyntax) -> TypeSyntax? {
        if case .type(let type) = argument.argument { return type }
        return nil
    }

    private func optionalShape(
        _ wrapped: TypeSyntax, scope: [String], spot: SourceSpot, what: String, depth: Int
    ) throws -> TypeShape {
        var inner = try shape(of: wrapped, scope: scope, spot: spot, what: what, depth: depth)
        inner.isOptional = true
        return inner
    }

    private func arrayShape(
        _ element: TypeSyntax, scope: [String], spot: SourceSpot, what: String, depth: Int
    ) throws -> TypeShape {
        let inner = try shape(of: element, scope: scope, spot: spot, what: what, depth: depth)
        guard !inner.isArray else {
            throw refusal(
                "\(what) is an array of arrays, which SwiftData's stores have not shown; Decant does not guess",
                spot)
        }
        return TypeShape(
            isOptional: false, isArray: true, isArrayElementOptional: inner.isOptional,
            element: inner.element)
    }

    /// The type an initial value gives a property with no annotation (`= "1"`, `= UUID()`, `= Tags()`).
    func inferredType(_ value: ExprSyntax, scope: [String], spot: SourceSpot, what: String) throws -> TypeShape {
        if value.is(StringLiteralExprSyntax.self) { return TypeShape(element: .builtin("String")) }
        if value.is(IntegerLiteralExprSyntax.self) { return TypeShape(element: .builtin("Int")) }
        if value.is(FloatLiteralExprSyntax.self) { return TypeShape(element: .builtin("Double")) }
        if value.is(BooleanLiteralExprSyntax.self) { return TypeShape(element: .builtin("Bool")) }
        if let prefix = value.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return try inferredType(prefix.expression, scope: scope, spot: spot, what: what)
        }
        if let call = value.as(FunctionCallExprSyntax.self), call.trailingClosure == nil {
            let called = call.calledExpression.trimmedDescription
            if let first = called.first, first.isUppercase, !called.contains("(") {
                let type = TypeSyntax(IdentifierTypeSyntax(name: .identifier(called)))
                return try shape(of: type, scope: scope, spot: spot, what: what)
            }
        }
        if let member = value.as(MemberAccessExprSyntax.self), let base = member.base?.trimmedDescription {
            if base == "Date" && member.declName.baseName.text == "now" { return TypeShape(element: .builtin("Date")) }
            if case .type(let decl) = index.resolve(base, from: scope), decl.kind == .enumType {
                return TypeShape(element: .declared(decl))
            }
        }
        throw refusal(
            "Decant cannot tell the type of \(what) from its initial value '\(value.shortText)'; "
                + "add a type annotation", spot)
    }

    // MARK: Stored properties

    /// One stored property of a `@Model` class or a Codable struct.
    struct StoredProperty {
        var name: String
        var type: TypeSyntax?
        var initialValue: ExprSyntax?
        var attributes: AttributeListSyntax
        var spot: SourceSpot
    }

    /// What a `@Model` class's member block says beyond its properties.
    struct ModelMacros {
        var unique: [[String]] = []
        var indexes: [[String]] = []
    }

    /// The stored properties of a type, in declaration order: not `static`/`class`, not computed, and (for models)
    /// not `@Transient`. `#if` among the members, `lazy` and other macros are refused.
    func storedProperties(of decl: TypeDecl, isModel: Bool) throws -> ([StoredProperty], ModelMacros) {
        var result: [StoredProperty] = []
        var macros = ModelMacros()
        let kind = isModel ? "@Model class" : "Codable struct"
        for member in decl.members {
            let spot = SourceSpot(file: decl.spot.file, node: Syntax(member.decl))
            if member.decl.is(IfConfigDeclSyntax.self) {
                throw refusal(
                    "#if inside \(kind) \(decl.qualifiedName): Decant cannot tell which branch the app is built "
                        + "with; move the stored properties out of #if", spot)
            }
            if let macro = member.decl.as(MacroExpansionDeclSyntax.self) {
                let name = macro.macroName.text
                guard isModel, name == "Unique" || name == "Index" else {
                    throw refusal(
                        "the macro #\(name) in \(kind) \(decl.qualifiedName) is not one of SwiftData's (#Unique, "
                            + "#Index); Decant cannot expand it", spot)
                }
                let groups = try keyPathGroups(macro.arguments, spot: spot)
                if name == "Unique" { macros.unique += groups } else { macros.indexes += groups }
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let modifiers = variable.modifiers.map(\.name.text)
            if modifiers.contains("static") || modifiers.contains("class") { continue }
            var isTransient = false
            for element in variable.attributes {
                guard let attribute = element.as(AttributeSyntax.self) else {
                    throw refusal(
                        "#if among the attributes of a property of \(decl.qualifiedName); Decant cannot "
                            + "tell which branch the app is built with", spot)
                }
                switch attribute.name {
                case "Transient" where isModel: isTransient = true
                case "Attribute" where isModel, "Relationship" where isModel: break
                case "available", "objc", "nonobjc", "MainActor", "preconcurrency", "usableFromInline": break
                default:
                    throw refusal(
                        "the attribute @\(attribute.name) on a property of \(kind) \(decl.qualifiedName) is neither "
                            + "SwiftData's nor Swift's own; Decant cannot expand a macro or property wrapper", spot)
                }
            }
            if isTransient { continue }
            if modifiers.contains("lazy") {
                throw refusal(
                    "a lazy property in \(kind) \(decl.qualifiedName): SwiftData does not store lazy "
                        + "properties as Decant knows; make it a stored or computed property", spot)
            }
            var pending: [StoredProperty] = []
            for binding in variable.bindings {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    throw refusal(
                        "a property pattern Decant cannot read ('\(binding.pattern.shortText)')",
                        spot)
                }
                if let accessors = binding.accessorBlock, Self.isComputed(accessors) { continue }
                pending.append(
                    StoredProperty(
                        name: pattern.identifier.text.replacingOccurrences(of: "`", with: ""),
                        type: binding.typeAnnotation?.type, initialValue: binding.initializer?.value,
                        attributes: variable.attributes, spot: spot))
                if let type = binding.typeAnnotation?.type {
                    // `var a, b: Int`: the annotation types every name before it that has none.
                    for index in pending.indices where pending[index].type == nil && pending[index].initialValue == nil
                    {
                        pending[index].type = type
                    }
                    result += pending
                    pending = []
                }
            }
            result += pending
        }
        return (result, macros)
    }

    private static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        switch block.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { accessor in
                let text = accessor.accessorSpecifier.text
                return text != "willSet" && text != "didSet"
            }
        }
    }

    /// `([\.a], [\.a, \.b])` → `[["a"], ["a", "b"]]`.
    private func keyPathGroups(_ arguments: LabeledExprListSyntax, spot: SourceSpot) throws -> [[String]] {
        try arguments.map { argument in
            guard let array = argument.expression.as(ArrayExprSyntax.self) else {
                throw refusal(
                    "expected an array of key paths, found '\(argument.expression.shortText)'",
                    spot)
            }
            return try array.elements.map { element in
                guard let name = Self.keyPathProperty(element.expression) else {
                    throw refusal(
                        "expected a key path such as \\.name, found '\(element.expression.shortText)'",
                        spot)
                }
                return name
            }
        }
    }

    /// The single property a key path names (`\.name`, `\Note.name`).
    static func keyPathProperty(_ expression: ExprSyntax) -> String? {
        guard let keyPath = expression.as(KeyPathExprSyntax.self), keyPath.components.count == 1,
            case .property(let property) = keyPath.components.first?.component
        else { return nil }
        return property.declName.baseName.text
    }

    // MARK: Errors

    func refusal(_ message: String, _ spot: SourceSpot) -> DecantError {
        DecantError(.unsupportedFormat, message + " — at '\(spot.declarationText)'", at: spot.location)
    }
}
