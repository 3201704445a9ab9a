import DecantCore
import Foundation
import SwiftParser
import SwiftSyntax

/// One parsed Swift file: its tree and the converter that turns positions into lines.
struct SwiftSourceFile {
    /// The path as the user named it.
    var path: String
    var tree: SourceFileSyntax
    var converter: SourceLocationConverter

    /// Where `node` starts in this file.
    func location(of node: some SyntaxProtocol) -> Location {
        let start = node.startLocation(converter: converter)
        return Location(path: path, line: start.line, column: start.column)
    }
}

/// A reference to a syntax node and the file it is in, for messages.
struct SourceSpot {
    var file: SwiftSourceFile
    var node: Syntax

    var location: Location { file.location(of: node) }
    /// The first line of the declaration, for messages.
    var declarationText: String {
        let text = node.trimmedDescription
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? text
        return line.count > 100 ? String(line.prefix(100)) + "…" : line
    }
}

/// Every named type, type alias and declaration of interest in the files given, by qualified name.
struct SwiftSourceIndex {
    enum Kind { case classType, structType, enumType, actorType, protocolType }

    /// A class, struct or enum declaration.
    struct TypeDecl {
        var kind: Kind
        /// `Outer.Inner`.
        var qualifiedName: String
        var simpleName: String
        /// The qualified name of the enclosing type (empty at file level).
        var scope: [String]
        var spot: SourceSpot
        var attributes: AttributeListSyntax
        var inherited: [String]
        var members: MemberBlockItemListSyntax
        var isModel: Bool { attributes.contains { $0.as(AttributeSyntax.self)?.name == "Model" } }
    }

    /// A `typealias`.
    struct AliasDecl {
        var qualifiedName: String
        var scope: [String]
        var target: TypeSyntax
        var spot: SourceSpot
    }

    var files: [SwiftSourceFile] = []
    var types: [String: TypeDecl] = [:]
    /// Qualified names in declaration order (file order, then source order).
    var typeOrder: [String] = []
    var aliases: [String: AliasDecl] = [:]
    /// Names declared only inside `#if` branches, with where.
    var conditionalNames: [String: SourceSpot] = [:]
    /// Conformances added by extensions, by the extended type's spelling.
    var extensionConformances: [String: [String]] = [:]
    /// Extensions seen, whose members are declared once every file is read: in the scope of the type they extend
    /// (`extension Folder { enum FolderType … }` declares `Folder.FolderType`), which may be in a later file.
    private var extensions: [(node: ExtensionDeclSyntax, file: SwiftSourceFile, conditional: Bool)] = []

    /// Reads and parses the files; a file that is not UTF-8 or does not parse throws `.malformedInput` at the
    /// first error.
    init(files urls: [URL]) throws {
        for url in urls {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw DecantError(
                    .ioError, "cannot read the Swift file", at: Location(path: url.displayPath),
                    underlyingError: error)
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw DecantError(
                    .malformedInput, "not a Swift source file: the bytes are not UTF-8 text",
                    at: Location(path: url.displayPath))
            }
            if let deep = NestingScan.firstTooDeep(in: text) {
                throw DecantError(
                    .malformedInput,
                    "the Swift source nests brackets more than \(NestingScan.limit) levels deep, more than Swift's "
                        + "parser takes", at: Location(path: url.displayPath, line: deep.line, column: deep.column))
            }
            let tree = Parser.parse(source: text)
            // Before anything walks the tree recursively (the location converter does).
            if let deep = DepthScan.firstTooDeep(in: tree) {
                let before = Array(text.utf8).prefix(deep.position.utf8Offset)
                let line = before.count { $0 == UInt8(ascii: "\n") } + 1
                let column = before.count - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
                throw DecantError(
                    .malformedInput,
                    "the Swift source nests expressions more than \(DepthScan.limit) levels deep; Decant reads model "
                        + "source, not generated code of this shape",
                    at: Location(path: url.displayPath, line: line, column: column))
            }
            let file = SwiftSourceFile(
                path: url.displayPath, tree: tree,
                converter: SourceLocationConverter(fileName: url.displayPath, tree: tree))
            if tree.hasError, let bad = SyntaxErrorFinder.first(in: tree) {
                throw DecantError(
                    .malformedInput,
                    "the Swift source does not parse (\(bad.description)); give files that compile",
                    at: file.location(of: bad.node))
            }
            files.append(file)
            collect(tree.statements.map { Syntax($0.item) }, scope: [], file: file, conditional: false)
        }
        collectExtensionMembers()
    }

    /// Declares the members of every extension in the scope of the type it extends. An extension may extend a type
    /// declared in another extension (`extension Folder.Kind`), so extensions are taken in rounds until none more
    /// resolves; one of a type the files do not declare (a Foundation type) keeps its spelling as the scope.
    private mutating func collectExtensionMembers() {
        var pending = extensions
        extensions = []
        while !pending.isEmpty {
            var unresolved: [(node: ExtensionDeclSyntax, file: SwiftSourceFile, conditional: Bool)] = []
            for entry in pending {
                guard let scope = extendedScope(entry.node.extendedType.trimmedDescription) else {
                    unresolved.append(entry)
                    continue
                }
                collect(
                    entry.node.memberBlock.members.map { Syntax($0.decl) }, scope: scope, file: entry.file,
                    conditional: entry.conditional)
            }
            if unresolved.count == pending.count {
                for entry in unresolved {
                    let scope = entry.node.extendedType.trimmedDescription.split(separator: ".").map(String.init)
                    collect(
                        entry.node.memberBlock.members.map { Syntax($0.decl) }, scope: scope, file: entry.file,
                        conditional: entry.conditional)
                }
                break
            }
            pending = unresolved
        }
    }

    /// The qualified name, as scope components, of the type `spelling` names from file level (through type
    /// aliases, as SwiftData's versioned schemas use them); nil when the files declare no such type.
    private func extendedScope(_ spelling: String) -> [String]? {
        var resolution = resolve(spelling, from: [])
        for _ in 0..<16 {
            switch resolution {
            case .type(let decl): return decl.qualifiedName.split(separator: ".").map(String.init)
            case .alias(let alias): resolution = resolve(alias.target.trimmedDescription, from: alias.scope)
            case .conditional, .unknown: return nil
            }
        }
        return nil
    }

    private mutating func collect(_ items: [Syntax], scope: [String], file: SwiftSourceFile, conditional: Bool) {
        for item in items {
            if let config = item.as(IfConfigDeclSyntax.self) {
                for clause in config.clauses {
                    switch clause.elements {
                    case .statements(let list)?:
                        collect(list.map { Syntax($0.item) }, scope: scope, file: file, conditional: true)
                    case .decls(let list)?:
                        collect(list.map { Syntax($0.decl) }, scope: scope, file: file, conditional: true)
                    default: break
                    }
                }
                continue
            }
            if let ext = item.as(ExtensionDeclSyntax.self) {
                let name = ext.extendedType.trimmedDescription
                extensionConformances[name, default: []] += Self.inheritedNames(ext.inheritanceClause)
                extensions.append((ext, file, conditional))
                continue
            }
            if let alias = item.as(TypeAliasDeclSyntax.self) {
                let qualified = (scope + [alias.name.text]).joined(separator: ".")
                let spot = SourceSpot(file: file, node: Syntax(alias))
                if conditional {
                    conditionalNames[qualified] = spot
                    continue
                }
                aliases[qualified] = AliasDecl(
                    qualifiedName: qualified, scope: scope, target: alias.initializer.value, spot: spot)
                continue
            }
            let decl: (Kind, TokenSyntax, AttributeListSyntax, InheritanceClauseSyntax?, MemberBlockSyntax)?
            if let node = item.as(ClassDeclSyntax.self) {
                decl = (.classType, node.name, node.attributes, node.inheritanceClause, node.memberBlock)
            } else if let node = item.as(StructDeclSyntax.self) {
                decl = (.structType, node.name, node.attributes, node.inheritanceClause, node.memberBlock)
            } else if let node = item.as(EnumDeclSyntax.self) {
                decl = (.enumType, node.name, node.attributes, node.inheritanceClause, node.memberBlock)
            } else if let node = item.as(ActorDeclSyntax.self) {
                decl = (.actorType, node.name, node.attributes, node.inheritanceClause, node.memberBlock)
            } else if let node = item.as(ProtocolDeclSyntax.self) {
                decl = (.protocolType, node.name, node.attributes, node.inheritanceClause, node.memberBlock)
            } else {
                decl = nil
            }
            guard let (kind, name, attributes, inheritance, members) = decl else { continue }
            let qualified = (scope + [name.text]).joined(separator: ".")
            let spot = SourceSpot(file: file, node: item)
            if conditional {
                conditionalNames[qualified] = spot
            } else if types[qualified] == nil {
                types[qualified] = TypeDecl(
                    kind: kind, qualifiedName: qualified, simpleName: name.text, scope: scope, spot: spot,
                    attributes: attributes, inherited: Self.inheritedNames(inheritance), members: members.members)
                typeOrder.append(qualified)
            }
            collect(
                members.members.map { Syntax($0.decl) }, scope: scope + [name.text], file: file,
                conditional: conditional)
        }
    }

    static func inheritedNames(_ clause: InheritanceClauseSyntax?) -> [String] {
        guard let clause else { return [] }
        return clause.inheritedTypes.flatMap { inherited -> [String] in
            if let composition = inherited.type.as(CompositionTypeSyntax.self) {
                return composition.elements.map { $0.type.trimmedDescription }
            }
            return [inherited.type.trimmedDescription]
        }
    }

    /// The conformances of a type, from its declaration and from extensions of it.
    func conformances(of decl: TypeDecl) -> [String] {
        decl.inherited + (extensionConformances[decl.qualifiedName] ?? [])
            + (decl.scope.isEmpty ? [] : extensionConformances[decl.simpleName] ?? [])
    }

    /// What a spelled type name resolves to from inside `scope`.
    enum Resolution {
        case type(TypeDecl)
        /// A type alias's target, to be resolved from the alias's scope.
        case alias(AliasDecl)
        case conditional(SourceSpot)
        case unknown
    }

    /// Resolves a (possibly dotted) name as Swift looks it up: the innermost enclosing scope first.
    func resolve(_ name: String, from scope: [String], depth: Int = 0) -> Resolution {
        guard depth < 16 else { return .unknown }
        var inner = scope
        while true {
            let qualified = (inner + [name]).joined(separator: ".")
            if let decl = types[qualified] { return .type(decl) }
            if let alias = aliases[qualified] { return .alias(alias) }
            if let spot = conditionalNames[qualified] { return .conditional(spot) }
            if inner.isEmpty { break }
            inner.removeLast()
        }
        // A dotted name whose first part is an alias (`Models.Note` where `Models = V2`, or `= Schemas.V2`).
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        if parts.count == 2, case .alias(let alias) = resolve(parts[0], from: scope, depth: depth + 1) {
            // The alias's target as written (`V2.Palette` too), resolved from where the alias is declared.
            return resolve(alias.target.trimmedDescription + "." + parts[1], from: alias.scope, depth: depth + 1)
        }
        return .unknown
    }
}

/// Finds the first place a tree does not parse: a missing token or unexpected text.
final class SyntaxErrorFinder: SyntaxVisitor {
    struct Found {
        var node: Syntax
        var description: String
    }

    var found: Found?

    static func first(in tree: SourceFileSyntax) -> Found? {
        let finder = SyntaxErrorFinder(viewMode: .all)
        finder.walk(tree)
        return finder.found
    }

    override func visit(_ node: UnexpectedNodesSyntax) -> SyntaxVisitorContinueKind {
        if found == nil {
            let text = node.trimmedDescription
            found = Found(node: Syntax(node), description: "unexpected text '\(text.prefix(40))'")
        }
        return .skipChildren
    }

    override func visit(_ token: TokenSyntax) -> SyntaxVisitorContinueKind {
        if found == nil, token.presence == .missing {
            let what = token.tokenKind == .identifier("") ? "an identifier" : "'\(token.text)'"
            found = Found(node: Syntax(token), description: "expected \(what)")
        }
        return .skipChildren
    }
}

extension AttributeSyntax {
    /// The attribute's name without arguments (`Model`, `Attribute`).
    var name: String { attributeName.trimmedDescription }

    /// The arguments, when they are a labelled list.
    var argumentList: LabeledExprListSyntax? {
        if case .argumentList(let list)? = arguments { return list }
        return nil
    }
}

/// A scan for nesting deeper than swift-syntax parses (`maximumNestingLevel`, 256): its look-ahead for types
/// recurses once per bracket without that bound, so `[[[…]]]` twenty thousand deep would run out of stack. Brackets
/// in string literals and comments are not counted; `<` counts only right after a name (`Array<`).
enum NestingScan {
    static let limit = 256

    static func firstTooDeep(in text: String) -> (line: Int, column: Int)? {
        var depth = 0
        var line = 1
        var column = 0
        var previous: UInt8 = 0
        var inString = false
        var inLineComment = false
        var blockComments = 0
        var escaped = false
        var interpolations: [Int] = []
        var lineStart = true
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            column += 1
            defer {
                previous = byte
                index += 1
            }
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 0
                lineStart = true
                inLineComment = false
                inString = false  // single-line literals end here; multi-line ones only hide fewer brackets
                interpolations.removeAll()
                continue
            }
            if inLineComment { continue }
            if blockComments > 0 {
                if byte == UInt8(ascii: "*") && next == UInt8(ascii: "/") {
                    blockComments -= 1
                    index += 1
                } else if byte == UInt8(ascii: "/") && next == UInt8(ascii: "*") {
                    blockComments += 1
                    index += 1
                }
                continue
            }
            if inString {
                if escaped {
                    escaped = false
                    if byte == UInt8(ascii: "(") {
                        // An interpolation is code: counted, back in the string at its closing parenthesis.
                        interpolations.append(depth)
                        depth += 1
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                if depth > limit { return (line, column) }
                continue
            }
            if byte == UInt8(ascii: ")"), let open = interpolations.last, depth - 1 == open {
                interpolations.removeLast()
                depth = open
                inString = true
                continue
            }
            let atLineStart = lineStart
            if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { lineStart = false }
            if byte == UInt8(ascii: "#") && atLineStart {
                // `#if` blocks nest as brackets do for the parser.
                if directive("if", at: index + 1, in: bytes) { depth += 1 }
                if directive("endif", at: index + 1, in: bytes) { depth = max(0, depth - 1) }
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "/") where next == UInt8(ascii: "/"): inLineComment = true
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                blockComments += 1
                index += 1
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: "<") where isNameByte(previous):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ">"):
                depth = max(0, depth - 1)
            default: break
            }
            if depth > limit { return (line, column) }
        }
        return nil
    }

    /// Whether `word` is written at `index`, not followed by more of a name.
    private static func directive(_ word: String, at index: Int, in bytes: [UInt8]) -> Bool {
        let word = Array(word.utf8)
        guard index + word.count <= bytes.count, Array(bytes[index..<index + word.count]) == word else { return false }
        return index + word.count == bytes.count || !isNameByte(bytes[index + word.count])
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte >= 0x80
    }
}

/// The syntax tree's depth, measured without recursion: every walk over a tree deeper than a few thousand levels
/// (a chain of 200,000 `.b` member accesses, which swift-syntax parses without recursing) would run out of stack.
enum DepthScan {
    static let limit = 2_000

    static func firstTooDeep(in tree: SourceFileSyntax) -> Syntax? {
        var stack: [(node: Syntax, depth: Int)] = [(Syntax(tree), 0)]
        while let (node, depth) = stack.popLast() {
            if depth > limit { return node }
            for child in node.children(viewMode: .all) { stack.append((child, depth + 1)) }
        }
        return nil
    }
}

extension SyntaxProtocol {
    /// The node's text on one line, at most 60 characters, for messages.
    var shortText: String {
        var text = ""
        for token in tokens(viewMode: .sourceAccurate) {
            if !text.isEmpty, token.leadingTrivia.contains(where: \.isWhitespace) { text += " " }
            text += token.text
            if !token.trailingTrivia.isEmpty { text += " " }
            if text.count > 60 { return String(text.prefix(60)) + "…" }
        }
        return text.trimmingCharacters(in: .whitespaces)
    }
}
