public import DecantCore
public import Foundation
import SwiftSyntax

/// Reads a SwiftData model from Swift source: the `@Model` classes, the `VersionedSchema` enums and the
/// `SchemaMigrationPlan` of the files given, built into the Core Data model SwiftData compiles them into
/// (`coredata-formats.md` section 12).
///
/// ```swift
/// let bundle = try SwiftSourceModelReader.load(from: URL(fileURLWithPath: "Sources/Models"))
/// print(bundle.versions.map { $0.versionName ?? "" }, bundle.stages)
/// ```
///
/// What source alone cannot say (types of other modules, `#if` branches, macros other than SwiftData's, shapes
/// no real store has shown) is refused with `.unsupportedFormat` at the declaration, saying what to give instead;
/// a file that does not parse throws `.malformedInput` at its first error.
public enum SwiftSourceModelReader: Sendable {
    /// Whether `url` is a Swift source model: a `.swift` file, or a folder (not a model bundle) holding any.
    public static func recognizes(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue { return url.pathExtension == "swift" }
        let bundleExtensions: Set<String> = ["xcdatamodeld", "xcdatamodel", "momd", "xcmappingmodel"]
        guard !bundleExtensions.contains(url.pathExtension.lowercased()) else { return false }
        return (try? swiftFiles(in: url, first: true).isEmpty == false) ?? false
    }

    /// The Swift files a path names, or nil when it names no Swift source: a `.swift` file, a folder holding any
    /// (not a model bundle), or existing `.swift` files separated by commas. `name` is the bundle's name.
    public static func sourceFiles(at url: URL) -> (files: [URL], name: String)? {
        if recognizes(url) {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let files = isDirectory.boolValue ? (try? swiftFiles(in: url)) ?? [] : [url]
            return (files, url.deletingPathExtension().lastPathComponent)
        }
        let path = url.relativePath
        guard !FileManager.default.fileExists(atPath: url.path), path.contains(",") else { return nil }
        let base = url.baseURL
        let files = path.split(separator: ",").map { URL(fileURLWithPath: String($0), relativeTo: base) }
        guard files.count > 1, files.allSatisfy({ $0.pathExtension == "swift" && recognizes($0) }) else { return nil }
        return (files, files[0].deletingPathExtension().lastPathComponent)
    }

    /// Reads a folder (every `.swift` file in it and its subfolders, hidden ones and `.build` left out) or one
    /// `.swift` file.
    public static func load(from url: URL) throws -> ModelBundle {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no Swift source here", at: Location(path: url.displayPath))
        }
        let files = isDirectory.boolValue ? try swiftFiles(in: url) : [url]
        guard !files.isEmpty else {
            throw DecantError(
                .unsupportedFormat, "the folder holds no .swift file", at: Location(path: url.displayPath))
        }
        return try load(files: files, name: url.deletingPathExtension().lastPathComponent)
    }

    /// Reads several `.swift` files as one module.
    public static func load(files: [URL], name: String) throws -> ModelBundle {
        let index = try SwiftSourceIndex(files: files)
        return try SwiftSchemaReader(index: index).bundle(name: name)
    }

    /// The `.swift` files below `folder`, sorted; with `first`, only the first one found (enough to tell a folder of
    /// Swift source).
    static func swiftFiles(in folder: URL, first: Bool = false) throws -> [URL] {
        guard
            let enumerator = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else {
            throw DecantError(.ioError, "cannot list the folder", at: Location(path: folder.displayPath))
        }
        var files: [URL] = []
        for case let file as URL in enumerator {
            if file.lastPathComponent == ".build" {
                enumerator.skipDescendants()
                continue
            }
            if file.pathExtension == "swift" {
                files.append(file)
                if first { break }
            }
        }
        let prefix = folder.path.hasSuffix("/") ? folder.path : folder.path + "/"
        // Named as the user named the folder, in a stable order.
        return files.map { file -> URL in
            let relative =
                file.path.hasPrefix(prefix) ? String(file.path.dropFirst(prefix.count)) : file.lastPathComponent
            return folder.appendingPathComponent(relative)
        }.sorted { $0.path < $1.path }
    }
}

/// Versions, container roots and the migration plan (12.2, 12.8).
struct SwiftSchemaReader {
    typealias TypeDecl = SwiftSourceIndex.TypeDecl

    let index: SwiftSourceIndex
    var builder: SwiftModelBuilder { SwiftModelBuilder(index: index) }

    /// What the container calls of the files name.
    struct ContainerFacts {
        var roots: [TypeDecl] = []
        var versionedSchemas: [TypeDecl] = []
        var plans: [TypeDecl] = []
    }

    func bundle(name: String) throws -> ModelBundle {
        let versioned = index.typeOrder.compactMap { index.types[$0] }.filter {
            index.conformances(of: $0).contains { $0 == "VersionedSchema" || $0 == "SwiftData.VersionedSchema" }
        }
        let plans = index.typeOrder.compactMap { index.types[$0] }.filter {
            index.conformances(of: $0).contains { $0 == "SchemaMigrationPlan" || $0 == "SwiftData.SchemaMigrationPlan" }
        }
        let container = try containerFacts()
        if versioned.isEmpty {
            let models = index.typeOrder.compactMap { index.types[$0] }.filter(\.isModel)
            guard !models.isEmpty else {
                throw DecantError(
                    .unsupportedFormat, "no @Model class in the Swift files given",
                    at: Location(path: index.files.first?.path))
            }
            let roots = container.roots.isEmpty ? models : container.roots
            let model = try builder.objectModel(roots: roots, versionName: "1.0.0", identifiers: ["1.0.0"])
            return ModelBundle(name: name, versions: [model], currentVersionName: "1.0.0", sourceKind: .swiftSource)
        }
        // The plan the container names, else the only one.
        let plan: TypeDecl?
        if let named = container.plans.first {
            plan = named
        } else if plans.count > 1 {
            throw builder.refusal(
                "\(plans.count) SchemaMigrationPlans (\(plans.map(\.qualifiedName).joined(separator: ", "))) and no "
                    + "ModelContainer(…, migrationPlan:) that names one; give the files of one app", plans[1].spot)
        } else {
            plan = plans.first
        }
        var chain: [TypeDecl]
        var stages: [VersionStage] = []
        if let plan {
            chain = try schemaList(plan)
            stages = try self.stages(of: plan, chain: chain)
        } else {
            chain = versioned
        }
        var versions: [ObjectModel] = []
        for schema in chain {
            let identifier = try versionIdentifier(of: schema)
            let roots = try models(of: schema)
            versions.append(
                try builder.objectModel(roots: roots, versionName: schema.simpleName, identifiers: [identifier]))
        }
        if plan == nil {
            // No plan: oldest first by version identifier.
            versions.sort { lhs, rhs in
                let a = lhs.versionIdentifiers.first?.split(separator: ".").compactMap { Int($0) } ?? []
                let b = rhs.versionIdentifiers.first?.split(separator: ".").compactMap { Int($0) } ?? []
                return a.lexicographicallyPrecedes(b)
            }
        }
        let current = container.versionedSchemas.last?.simpleName ?? versions.last?.versionName
        var bundle = ModelBundle(name: name, versions: versions, currentVersionName: current, sourceKind: .swiftSource)
        bundle.stages = stages
        return bundle
    }

    // MARK: Containers

    /// Every `ModelContainer(for:…)`, `.modelContainer(for:…)` and `Schema(…)` call: the `@Model` types they
    /// name are the roots, a `VersionedSchema` (`Schema(versionedSchema:)`) the current version, `migrationPlan:`
    /// the plan.
    private func containerFacts() throws -> ContainerFacts {
        var facts = ContainerFacts()
        for file in index.files {
            let finder = ContainerCallFinder(viewMode: .sourceAccurate)
            finder.walk(file.tree)
            for reference in finder.typeReferences {
                let spot = SourceSpot(file: file, node: reference.node)
                let decl = try resolveType(reference.name, scope: reference.scope, spot: spot)
                if decl.isModel {
                    if !facts.roots.contains(where: { $0.qualifiedName == decl.qualifiedName }) {
                        facts.roots.append(decl)
                    }
                } else if index.conformances(of: decl).contains("VersionedSchema") {
                    facts.versionedSchemas.append(decl)
                } else if index.conformances(of: decl).contains("SchemaMigrationPlan") {
                    facts.plans.append(decl)
                }
            }
        }
        return facts
    }

    /// The declaration a type name (`Note`, `V2.Note`, a type alias) stands for, seen from `scope`.
    func resolveType(_ name: String, scope: [String], spot: SourceSpot) throws -> TypeDecl {
        let shape = try builder.shape(
            of: TypeSyntax(IdentifierTypeSyntax(name: .identifier(name))), scope: scope, spot: spot, what: "'\(name)'")
        guard case .declared(let decl) = shape.element, !shape.isArray, !shape.isOptional else {
            throw builder.refusal("'\(name)' is not a type the files declare", spot)
        }
        return decl
    }

    // MARK: Versioned schemas and plans

    /// A `static var`/`let` of a type: its initial value or its getter's body.
    private func staticMember(_ name: String, of decl: TypeDecl) -> Syntax? {
        for member in decl.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                variable.modifiers.contains(where: { $0.name.text == "static" })
            else { continue }
            for binding in variable.bindings
            where binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == name {
                if let value = binding.initializer?.value { return Syntax(value) }
                if let accessors = binding.accessorBlock { return Syntax(accessors) }
            }
        }
        return nil
    }

    private func requiredStaticMember(_ name: String, of decl: TypeDecl) throws -> Syntax {
        guard let member = staticMember(name, of: decl) else {
            throw builder.refusal("\(decl.qualifiedName) has no static \(name) Decant can read", decl.spot)
        }
        return member
    }

    /// The `X.self` types named inside a syntax node, in order.
    private func typeList(_ node: Syntax, scope: [String], file: SwiftSourceFile) throws -> [TypeDecl] {
        let finder = SelfReferenceFinder(viewMode: .sourceAccurate)
        finder.walk(node)
        return try finder.names.map { name, reference in
            try resolveType(name, scope: scope, spot: SourceSpot(file: file, node: reference))
        }
    }

    private func models(of schema: TypeDecl) throws -> [TypeDecl] {
        let member = try requiredStaticMember("models", of: schema)
        let models = try typeList(member, scope: schema.scope + [schema.simpleName], file: schema.spot.file)
        for model in models where !model.isModel {
            throw builder.refusal(
                "\(schema.simpleName).models lists \(model.qualifiedName), which is not a @Model class",
                SourceSpot(file: schema.spot.file, node: member))
        }
        guard !models.isEmpty else {
            throw builder.refusal(
                "\(schema.simpleName).models names no @Model class", SourceSpot(file: schema.spot.file, node: member))
        }
        return models
    }

    /// `Schema.Version(1, 2, 0)` → `"1.2.0"`.
    private func versionIdentifier(of schema: TypeDecl) throws -> String {
        let member = try requiredStaticMember("versionIdentifier", of: schema)
        let finder = VersionCallFinder(viewMode: .sourceAccurate)
        finder.walk(member)
        guard let numbers = finder.numbers, numbers.count == 3 else {
            throw builder.refusal(
                "\(schema.simpleName).versionIdentifier: expected Schema.Version(major, minor, patch) with literal "
                    + "numbers",
                SourceSpot(file: schema.spot.file, node: member))
        }
        return numbers.map(String.init).joined(separator: ".")
    }

    private func schemaList(_ plan: TypeDecl) throws -> [TypeDecl] {
        let member = try requiredStaticMember("schemas", of: plan)
        let schemas = try typeList(member, scope: plan.scope + [plan.simpleName], file: plan.spot.file)
        for schema in schemas where !index.conformances(of: schema).contains("VersionedSchema") {
            throw builder.refusal(
                "\(plan.simpleName).schemas lists \(schema.qualifiedName), which is not a VersionedSchema",
                SourceSpot(file: plan.spot.file, node: member))
        }
        guard !schemas.isEmpty else {
            throw builder.refusal("\(plan.simpleName).schemas is empty", SourceSpot(file: plan.spot.file, node: member))
        }
        return schemas
    }

    /// The plan's `stages`: `.lightweight(fromVersion:toVersion:)` or `.custom(fromVersion:toVersion:willMigrate:
    /// didMigrate:)`, written in the array or as static members of the plan it names.
    private func stages(of plan: TypeDecl, chain: [TypeDecl]) throws -> [VersionStage] {
        let member = try requiredStaticMember("stages", of: plan)
        let file = plan.spot.file
        guard let array = ArrayFinder.first(in: member) else {
            throw builder.refusal(
                "\(plan.simpleName).stages: expected an array of MigrationStage values",
                SourceSpot(file: file, node: member))
        }
        var stages: [VersionStage] = []
        for element in array.elements {
            var expression = element.expression
            if let reference = expression.as(DeclReferenceExprSyntax.self)
                ?? expression.as(MemberAccessExprSyntax.self).flatMap({ $0.base == nil ? nil : $0 }).map({
                    DeclReferenceExprSyntax(baseName: $0.declName.baseName)
                })
            {
                guard let value = staticMember(reference.baseName.text, of: plan)?.as(ExprSyntax.self) else {
                    throw builder.refusal(
                        "the stage '\(element.expression.shortText)' is not a static member of "
                            + "\(plan.simpleName) with a value Decant can read",
                        SourceSpot(file: file, node: Syntax(element)))
                }
                expression = value
            }
            let spot = SourceSpot(file: file, node: Syntax(expression))
            guard let call = expression.as(FunctionCallExprSyntax.self),
                let kind = call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text,
                kind == "lightweight" || kind == "custom"
            else {
                throw builder.refusal(
                    "expected .lightweight(…) or .custom(…), found '\(expression.shortText)'",
                    spot)
            }
            var from: TypeDecl?
            var to: TypeDecl?
            var closures: [VersionStage.CustomClosure] = []
            for argument in call.arguments {
                let label = argument.label?.text
                switch label {
                case "fromVersion"?, "toVersion"?:
                    let types = try typeList(
                        Syntax(argument.expression), scope: plan.scope + [plan.simpleName], file: file)
                    guard types.count == 1 else {
                        throw builder.refusal("\(label ?? ""): expected SchemaV.self", spot)
                    }
                    if label == "fromVersion" { from = types[0] } else { to = types[0] }
                case "willMigrate"?, "didMigrate"?:
                    if argument.expression.is(NilLiteralExprSyntax.self) { continue }
                    closures.append(
                        VersionStage.CustomClosure(
                            name: label ?? "", location: file.location(of: argument.expression)))
                default:
                    throw builder.refusal(
                        "MigrationStage argument '\(argument.shortText)' is not one Decant knows",
                        spot)
                }
            }
            if let trailing = call.trailingClosure {
                closures.append(VersionStage.CustomClosure(name: "didMigrate", location: file.location(of: trailing)))
            }
            guard let from, let to else {
                throw builder.refusal("a stage without fromVersion: and toVersion:", spot)
            }
            for schema in [from, to] where !chain.contains(where: { $0.qualifiedName == schema.qualifiedName }) {
                throw builder.refusal(
                    "the stage names \(schema.simpleName), which \(plan.simpleName).schemas does not list",
                    spot)
            }
            stages.append(
                VersionStage(
                    from: from.simpleName, to: to.simpleName,
                    kind: kind == "lightweight" ? .lightweight : .custom(closures: closures), location: spot.location))
        }
        return stages
    }
}

// MARK: Syntax walkers

/// `X.self` references inside container calls, with the type scope of the call.
final class ContainerCallFinder: SyntaxVisitor {
    struct Reference {
        var name: String
        var scope: [String]
        var node: Syntax
    }

    var typeReferences: [Reference] = []

    override func visit(_ node: FunctionCallExprSyntax) -> SyntaxVisitorContinueKind {
        let called = node.calledExpression
        let name =
            called.as(DeclReferenceExprSyntax.self)?.baseName.text
            ?? called.as(MemberAccessExprSyntax.self)?.declName.baseName.text
        guard let name, ["ModelContainer", "Schema", "modelContainer"].contains(name) else { return .visitChildren }
        let scope = Self.scope(of: Syntax(node))
        let finder = SelfReferenceFinder(viewMode: .sourceAccurate)
        finder.walk(node.arguments)
        for (type, reference) in finder.names {
            typeReferences.append(Reference(name: type, scope: scope, node: reference))
        }
        // `Schema(SchemaV2.models)`: the versioned schema whose models it names.
        for argument in node.arguments {
            if let member = argument.expression.as(MemberAccessExprSyntax.self),
                member.declName.baseName.text == "models",
                let base = member.base?.trimmedDescription
            {
                typeReferences.append(Reference(name: base, scope: scope, node: Syntax(member)))
            }
        }
        return .visitChildren
    }

    /// The names of the types enclosing a node, outermost first.
    static func scope(of node: Syntax) -> [String] {
        var scope: [String] = []
        var current = node.parent
        while let parent = current {
            if let decl = parent.as(ClassDeclSyntax.self) { scope.insert(decl.name.text, at: 0) }
            if let decl = parent.as(StructDeclSyntax.self) { scope.insert(decl.name.text, at: 0) }
            if let decl = parent.as(EnumDeclSyntax.self) { scope.insert(decl.name.text, at: 0) }
            if let decl = parent.as(ExtensionDeclSyntax.self) {
                scope.insert(
                    contentsOf: decl.extendedType.trimmedDescription.split(separator: ".").map(String.init), at: 0)
            }
            current = parent.parent
        }
        return scope
    }
}

/// Every `X.self` (not inside a closure), in order.
final class SelfReferenceFinder: SyntaxVisitor {
    var names: [(String, Syntax)] = []

    override func visit(_ node: MemberAccessExprSyntax) -> SyntaxVisitorContinueKind {
        if node.declName.baseName.text == "self", let base = node.base {
            names.append((base.trimmedDescription, Syntax(node)))
            return .skipChildren
        }
        return .visitChildren
    }

    override func visit(_ node: ClosureExprSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
}

/// The integer arguments of the first call (`Schema.Version(1, 0, 0)`, `.init(1, 0, 0)`).
final class VersionCallFinder: SyntaxVisitor {
    var numbers: [Int]?

    override func visit(_ node: FunctionCallExprSyntax) -> SyntaxVisitorContinueKind {
        guard numbers == nil else { return .skipChildren }
        numbers = node.arguments.compactMap { argument in
            argument.expression.as(IntegerLiteralExprSyntax.self).flatMap { Int($0.literal.text) }
        }
        if numbers?.count != node.arguments.count { numbers = [] }
        return .skipChildren
    }
}

/// The first array literal in a node.
final class ArrayFinder: SyntaxVisitor {
    var found: ArrayExprSyntax?

    static func first(in node: Syntax) -> ArrayExprSyntax? {
        let finder = ArrayFinder(viewMode: .sourceAccurate)
        finder.walk(node)
        return finder.found
    }

    override func visit(_ node: ArrayExprSyntax) -> SyntaxVisitorContinueKind {
        if found == nil { found = node }
        return .skipChildren
    }
}
