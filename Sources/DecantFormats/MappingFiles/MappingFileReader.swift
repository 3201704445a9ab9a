public import DecantCore
import DecantCodecs
import Foundation

/// Reads a Decant mapping file (`schemas/mapping.schema.json`) from its parsed nodes into an ``ExplicitMapping``,
/// checking every key against the schema; every error names the file, the line and the key.
///
/// ```swift
/// let root = try MappingFileReader.parseJSON(text, path: "v2-v3.json")
/// let mapping = try MappingFileReader.mapping(from: root, path: "v2-v3.json")
/// ```
public enum MappingFileReader: Sendable {
    /// The keys an entity may have.
    static let entityKeys = ["to", "from", "remove", "where", "findOrCreate", "attributes", "relationships"]

    /// Reads the mapping a file's root node describes.
    /// - Throws: `.malformedInput` at the file, line and key of the first thing that does not fit the schema.
    public static func mapping(from root: MappingNode, path: String) throws -> ExplicitMapping {
        func failure(_ message: String, _ line: Int, _ key: String?) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, line: line, keyPath: key))
        }
        guard case .map(let entries) = root.content else {
            throw failure("a mapping file is a map with source, destination and entities", root.line, nil)
        }
        var source: String?
        var destination: String?
        var entities: [ExplicitEntityMapping] = []
        for entry in entries {
            switch entry.key {
            case "source", "destination":
                guard case .scalar(let text) = entry.value.content, !text.isEmpty else {
                    throw failure("\(entry.key) must be a version name or checksum", entry.line, entry.key)
                }
                if entry.key == "source" { source = text } else { destination = text }
            case "entities":
                if case .null = entry.value.content { continue }
                guard case .map(let list) = entry.value.content else {
                    throw failure("entities must be a map of entity names", entry.line, "entities")
                }
                for entity in list { entities.append(try self.entity(entity, path: path)) }
            default:
                throw failure("unknown key \(entry.key) (known: source, destination, entities)", entry.line, entry.key)
            }
        }
        guard let source else { throw failure("the file names no source version (source: …)", root.line, "source") }
        guard let destination else {
            throw failure("the file names no destination version (destination: …)", root.line, "destination")
        }
        return ExplicitMapping(source: source, destination: destination, path: path, entities: entities)
    }

    private static func entity(_ entry: MappingNode.Entry, path: String) throws -> ExplicitEntityMapping {
        let base = "entities.\(entry.key)"
        func failure(_ message: String, _ line: Int, _ key: String) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, line: line, keyPath: key))
        }
        var mapping = ExplicitEntityMapping(destination: entry.key, line: entry.line)
        if case .null = entry.value.content { return mapping }
        guard case .map(let fields) = entry.value.content else {
            throw failure("an entity is a map (\(entityKeys.joined(separator: ", ")))", entry.value.line, base)
        }
        for field in fields {
            let key = "\(base).\(field.key)"
            switch field.key {
            case "to":
                guard case .scalar(let name) = field.value.content, !name.isEmpty else {
                    throw failure("to must be a destination entity name", field.line, key)
                }
                mapping.name = entry.key
                mapping.destination = name
            case "from":
                switch field.value.content {
                case .null: mapping.source = .none
                case .scalar(let name): mapping.source = .entity(name)
                default: throw failure("from must be a source entity name or null", field.line, key)
                }
            case "remove":
                guard case .scalar(let flag) = field.value.content, ["true", "false"].contains(flag) else {
                    throw failure("remove must be true or false", field.line, key)
                }
                mapping.remove = flag == "true"
            case "where":
                guard case .scalar(let text) = field.value.content else {
                    throw failure("where must be an expression", field.line, key)
                }
                mapping.filter = try expression(text, path: path, line: field.value.line, key: key)
            case "findOrCreate":
                guard case .scalar(let text) = field.value.content else {
                    throw failure("findOrCreate must be an expression (the value objects are found by)", field.line, key)
                }
                mapping.findOrCreate = try expression(text, path: path, line: field.value.line, key: key)
            case "attributes", "relationships":
                if case .null = field.value.content { continue }
                guard case .map(let properties) = field.value.content else {
                    throw failure("\(field.key) must be a map of property names to expressions", field.line, key)
                }
                for property in properties {
                    let propertyKey = "\(key).\(property.key)"
                    let value: ValueExpression?
                    switch property.value.content {
                    case .null: value = nil
                    case .scalar(let text):
                        value = try expression(text, path: path, line: property.value.line, key: propertyKey)
                    default:
                        throw failure("a property's value must be an expression or null", property.line, propertyKey)
                    }
                    let line = ExplicitEntityMapping.Property(
                        name: property.key,
                        expression: value,
                        line: property.line
                    )
                    if field.key == "attributes" {
                        mapping.attributes.append(line)
                    } else {
                        mapping.relationships.append(line)
                    }
                }
            default:
                throw failure(
                    "unknown key \(field.key) (known: \(entityKeys.joined(separator: ", ")))",
                    field.line,
                    key
                )
            }
        }
        if mapping.name != nil {
            // A named entry is one more mapping into its destination: it says where its objects come from.
            guard case .entity = mapping.source, !mapping.remove else {
                throw failure(
                    "an entry with to: (\(mapping.destination)) names its source entity with from: and cannot remove",
                    entry.line, base)
            }
        }
        return mapping
    }

    private static func expression(_ text: String, path: String, line: Int, key: String) throws -> ValueExpression {
        let parsed: ValueExpression
        do {
            parsed = try ValueExpression(parsing: text)
        } catch let error as DecantError {
            throw DecantError(error.code, error.message, at: Location(path: path, line: line, keyPath: key))
        }
        // A part that overflows on every object (`floor(1e308)`) is this line's mistake, not any object's.
        if let overflow = parsed.constantOverflow(functions: ValueExpressionFunctions()) {
            throw DecantError(
                overflow.code, "`\(text)`: \(overflow.message)", at: Location(path: path, line: line, keyPath: key),
                underlyingError: overflow.underlyingError)
        }
        return parsed
    }

    // MARK: JSON

    /// Parses JSON text into nodes, keeping each value's line.
    /// - Throws: `.malformedInput` naming the file and line where the JSON breaks.
    public static func parseJSON(_ text: String, path: String) throws -> MappingNode {
        var parser = JSONNodeParser(bytes: Array(text.utf8), path: path)
        let node = try parser.value()
        parser.skipSpace()
        guard parser.atEnd else { throw parser.failure("unexpected text after the JSON value") }
        return node
    }
}

/// A small JSON parser that keeps lines (Foundation's does not).
private struct JSONNodeParser {
    let bytes: [UInt8]
    let path: String
    var position = 0
    var line = 1
    var depth = 0
    /// How deeply objects and arrays may nest (a mapping file needs four levels; parsing recurses per level).
    static let maximumDepth = 256

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    var atEnd: Bool { position >= bytes.count }

    func failure(_ message: String) -> DecantError {
        DecantError(.malformedInput, "not valid JSON: \(message)", at: Location(path: path, line: line))
    }

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x0A: line += 1
            case 0x20, 0x09, 0x0D: break
            default: return
            }
            position += 1
        }
    }

    mutating func value() throws -> MappingNode {
        skipSpace()
        guard position < bytes.count else { throw failure("expected a value, found the end") }
        let start = line
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) levels deep") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var entries: [MappingNode.Entry] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return MappingNode(.map(entries), line: start)
            }
            while true {
                skipSpace()
                let keyLine = line
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                    throw failure("expected a key in quotes")
                }
                let key = try string()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                    throw failure("expected `:` after \"\(key)\"")
                }
                position += 1
                entries.append(MappingNode.Entry(key: key, line: keyLine, value: try value()))
                skipSpace()
                guard position < bytes.count else { throw failure("unterminated object") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "}") else { throw failure("expected `,` or `}`") }
                position += 1
                return MappingNode(.map(entries), line: start)
            }
        case UInt8(ascii: "["):
            position += 1
            var items: [MappingNode] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return MappingNode(.list(items), line: start)
            }
            while true {
                items.append(try value())
                skipSpace()
                guard position < bytes.count else { throw failure("unterminated array") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "]") else { throw failure("expected `,` or `]`") }
                position += 1
                return MappingNode(.list(items), line: start)
            }
        case UInt8(ascii: "\""):
            return MappingNode(.scalar(try string()), line: start)
        default:
            let begin = position
            while position < bytes.count, !",}] \t\r\n".utf8.contains(bytes[position]) { position += 1 }
            let word = String(decoding: bytes[begin..<position], as: UTF8.self)
            if word == "null" { return MappingNode(.null, line: start) }
            if word == "true" || word == "false" || Double(word) != nil {
                return MappingNode(.scalar(word), line: start)
            }
            throw failure(
                word.isEmpty ? "unexpected `\(Character(UnicodeScalar(bytes[position])))`" : "unexpected `\(word)`"
            )
        }
    }

    mutating func string() throws -> String {
        position += 1
        var result: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw failure("unterminated string") }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "u"):
                    guard position + 4 <= bytes.count,
                        let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
                    else { throw failure("bad \\u escape") }
                    position += 4
                    result.append(contentsOf: Array(String(UnicodeScalar(code).map(Character.init) ?? "\u{FFFD}").utf8))
                default: result.append(escaped)
                }
            case 0x0A:
                throw failure("line break inside a string")
            default:
                result.append(byte)
            }
        }
        throw failure("unterminated string")
    }
}
