public import DecantCore
import DecantCodecs
import Foundation

/// Writes a hop's mapping as a Decant mapping file (YAML or JSON, `schemas/mapping.schema.json`) that names every
/// entity and property, so that reading it back with `--mapping` reproduces the same migration.
///
/// ```swift
/// let text = MappingFileWriter.render(result.mapping, as: .yaml)
/// try Data(text.utf8).write(to: URL(fileURLWithPath: "v1-v2.yaml"))
/// ```
public enum MappingFileWriter: Sendable {
    /// The two spellings of a mapping file.
    public enum Syntax: String, Sendable, Hashable, CaseIterable {
        case yaml
        case json

        /// The syntax a file name suggests: JSON for `.json`, YAML otherwise.
        public init(path: String) {
            self = path.lowercased().hasSuffix(".json") ? .json : .yaml
        }
    }

    /// The mapping file text.
    public static func render(_ mapping: MappingModel, as syntax: Syntax) -> String {
        switch syntax {
        case .yaml: renderYAML(mapping)
        case .json: renderJSON(mapping)
        }
    }

    /// A string as a JSON string literal (which YAML reads the same way).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    private static func expressionText(_ expression: ValueExpression?) -> String {
        expression.map { quoted($0.description) } ?? "null"
    }

    private static func renderYAML(_ mapping: MappingModel) -> String {
        var lines = [
            "# Decant mapping file (schemas/mapping.schema.json). Every entity and property is listed; edit the",
            "# expressions, or delete entries to let Decant infer them.",
            "source: \(quoted(mapping.sourceVersion))",
            "destination: \(quoted(mapping.destinationVersion))",
            "entities:",
        ]
        for entity in mapping.entityMappings {
            if entity.kind == .remove, let source = entity.sourceEntity {
                lines.append("  \(quoted(source)):")
                lines.append("    remove: true")
                continue
            }
            guard let destination = entity.destinationEntity else { continue }
            lines.append("  \(quoted(destination)):")
            lines.append("    from: \(entity.sourceEntity.map(quoted) ?? "null")")
            if let filter = entity.filter { lines.append("    where: \(quoted(filter.description))") }
            for (key, properties) in [("attributes", entity.attributes), ("relationships", entity.relationships)]
            where !properties.isEmpty {
                lines.append("    \(key):")
                for property in properties {
                    let note =
                        property.change == .explicit || property.change == .copied ? "" : "   # \(property.change)"
                    lines.append("      \(quoted(property.name)): \(expressionText(property.expression))\(note)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func renderJSON(_ mapping: MappingModel) -> String {
        var entities: [String] = []
        for entity in mapping.entityMappings {
            if entity.kind == .remove, let source = entity.sourceEntity {
                entities.append("    \(quoted(source)): {\"remove\": true}")
                continue
            }
            guard let destination = entity.destinationEntity else { continue }
            var fields = ["      \"from\": \(entity.sourceEntity.map(quoted) ?? "null")"]
            if let filter = entity.filter { fields.append("      \"where\": \(quoted(filter.description))") }
            for (key, properties) in [("attributes", entity.attributes), ("relationships", entity.relationships)]
            where !properties.isEmpty {
                let body = properties.map { "        \(quoted($0.name)): \(expressionText($0.expression))" }
                fields.append("      \"\(key)\": {\n" + body.joined(separator: ",\n") + "\n      }")
            }
            entities.append("    \(quoted(destination)): {\n" + fields.joined(separator: ",\n") + "\n    }")
        }
        return
            "{\n  \"source\": \(quoted(mapping.sourceVersion)),\n"
            + "  \"destination\": \(quoted(mapping.destinationVersion)),\n"
            + "  \"entities\": {\n" + entities.joined(separator: ",\n") + "\n  }\n}\n"
    }
}
