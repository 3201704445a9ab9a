public import DecantCore
import Foundation

/// A model version as a diagram, where Linux users have no Xcode graph view: Mermaid text (rendered by GitHub and
/// GitLab Markdown and many wikis) or Graphviz DOT (for SVG or PNG). Entities with their attributes (type and
/// optionality), abstract entities marked, inheritance arrows, relationships with their cardinality, order and
/// delete rules, each inverse pair drawn once. The same model always gives the same text.
///
/// ```swift
/// print(ModelDiagram(model: notes3, style: .mermaid).text)
/// ```
public struct ModelDiagram: Sendable, Hashable {
    /// The diagram language.
    public enum Style: String, Sendable, Hashable, CaseIterable {
        /// Mermaid `classDiagram`.
        case mermaid
        /// Graphviz `digraph`.
        case dot
    }

    /// One relationship line: a relationship, and its inverse when it has one (drawn together).
    public struct Link: Sendable, Hashable {
        /// The entity the relationship belongs to.
        public var entity: String
        /// The relationship.
        public var relationship: Relationship
        /// The inverse, drawn on the same line.
        public var inverse: Relationship?
    }

    /// The model drawn.
    public let model: ObjectModel
    /// The language.
    public let style: Style

    /// A diagram of `model`.
    public init(model: ObjectModel, style: Style) {
        self.model = model
        self.style = style
    }

    /// Entities sorted by name.
    public var entities: [Entity] { model.entities.sorted { $0.name < $1.name } }

    /// Every relationship declared by an entity (not inherited), each inverse pair once, in a stable order.
    public var links: [Link] {
        var drawn: Set<String> = []
        var result: [Link] = []
        for entity in entities {
            for relationship in entity.relationships.filter({ !$0.isTransient }).sorted(by: { $0.name < $1.name }) {
                let key = "\(entity.name).\(relationship.name)"
                guard !drawn.contains(key) else { continue }
                drawn.insert(key)
                var inverse: Relationship?
                if let name = relationship.inverseName, let destination = relationship.destinationEntity,
                    let candidate = model.entity(named: destination)?.relationships.first(where: { $0.name == name }),
                    "\(destination).\(name)" != key
                {
                    inverse = candidate
                    drawn.insert("\(destination).\(name)")
                }
                result.append(Link(entity: entity.name, relationship: relationship, inverse: inverse))
            }
        }
        return result
    }

    /// The diagram text.
    public var text: String {
        switch style {
        case .mermaid: mermaid
        case .dot: dot
        }
    }

    // MARK: Mermaid

    private var mermaid: String {
        var lines = ["classDiagram", "    direction LR"]
        for entity in entities {
            lines.append("    class \(Self.mermaidName(entity.name)) {")
            if entity.isAbstract { lines.append("        <<abstract>>") }
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
                lines.append("        +\(Self.typeName(attribute)) \(Self.mermaidText(attribute.name))")
            }
            lines.append("    }")
        }
        for entity in entities {
            if let parent = entity.parentName {
                lines.append("    \(Self.mermaidName(parent)) <|-- \(Self.mermaidName(entity.name))")
            }
        }
        for link in links {
            let destination = link.relationship.destinationEntity ?? "?"
            let near = link.inverse.map { "\"\(Self.cardinality($0))\" " } ?? ""
            let arrow = link.inverse == nil ? "-->" : "--"
            lines.append(
                "    \(Self.mermaidName(link.entity)) \(near)\(arrow) \"\(Self.cardinality(link.relationship))\" "
                    + "\(Self.mermaidName(destination)) : \(Self.mermaidText(Self.label(link)))")
        }
        return lines.joined(separator: "\n")
    }

    static let mermaidKeywords: Set<String> = [
        "class", "classdiagram", "direction", "note", "link", "click", "callback", "call", "href", "style", "classdef",
        "cssclass", "end", "namespace", "interface", "annotation", "graph", "flowchart", "subgraph", "default",
    ]

    /// A class name as Mermaid reads it: plain when an identifier that is no keyword, else in backticks.
    static func mermaidName(_ name: String) -> String {
        let plain = name.first.map { $0.isLetter || $0 == "_" } == true
            && name.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
            && !mermaidKeywords.contains(name.lowercased())
        return plain ? name : "`" + name.replacingOccurrences(of: "`", with: "'") + "`"
    }

    /// Free text (labels, member names) without the characters Mermaid gives meaning to.
    static func mermaidText(_ text: String) -> String {
        String(text.map { "\"`:;{}<>#|~".contains($0) ? "_" : $0 })
    }

    // MARK: DOT

    private var dot: String {
        var lines = [
            "digraph \(Self.dotString(model.versionName ?? "model")) {",
            "    graph [rankdir=LR, fontname=\"Helvetica\"];",
            "    node [shape=plain, fontname=\"Helvetica\"];",
            "    edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for entity in entities {
            var rows = [
                "<tr><td bgcolor=\"lightgrey\">" + (entity.isAbstract ? "<i>\(Self.html(entity.name))</i> «abstract»"
                    : "<b>\(Self.html(entity.name))</b>") + "</td></tr>"
            ]
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
                rows.append("<tr><td align=\"left\">\(Self.html(attribute.name)): \(Self.html(Self.typeName(attribute)))</td></tr>")
            }
            lines.append(
                "    \(Self.dotString(entity.name)) [label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\">"
                    + rows.joined() + "</table>>];")
        }
        for entity in entities {
            if let parent = entity.parentName {
                lines.append(
                    "    \(Self.dotString(entity.name)) -> \(Self.dotString(parent)) [arrowhead=empty, style=dashed];")
            }
        }
        for link in links {
            let destination = link.relationship.destinationEntity ?? "?"
            var attributes = [
                "label=\(Self.dotString(Self.label(link)))",
                "headlabel=\(Self.dotString(Self.cardinality(link.relationship)))",
                "arrowhead=\(link.relationship.isToMany ? "crow" : "normal")",
            ]
            if let inverse = link.inverse {
                attributes += [
                    "dir=both", "taillabel=\(Self.dotString(Self.cardinality(inverse)))",
                    "arrowtail=\(inverse.isToMany ? "crow" : "normal")",
                ]
            }
            lines.append(
                "    \(Self.dotString(link.entity)) -> \(Self.dotString(destination)) [\(attributes.joined(separator: ", "))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// A DOT quoted string.
    static func dotString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Text inside a DOT HTML label.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    // MARK: Shared

    /// `String?`, `Integer16`, `Transformable` …: the type without spaces, `?` when optional, ` (derived)`.
    static func typeName(_ attribute: Attribute) -> String {
        attribute.type.modelName.replacingOccurrences(of: " ", with: "") + (attribute.isOptional ? "?" : "")
            + (attribute.isTransient ? " (transient)" : "") + (attribute.derivation != nil ? " (derived)" : "")
    }

    /// `0..1`, `1`, `*`, `1..*`, `2..5`.
    static func cardinality(_ relationship: Relationship) -> String {
        if !relationship.isToMany { return relationship.isOptional ? "0..1" : "1" }
        let lower = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        let upper = relationship.maxCount > 0 ? "\(relationship.maxCount)" : "*"
        return lower == 0 && upper == "*" ? "*" : "\(lower)..\(upper)"
    }

    /// `notes (ordered, cascade) / folder`: the relationship names, with order and delete rules other than Nullify.
    static func label(_ link: Link) -> String {
        func describe(_ relationship: Relationship) -> String {
            var notes: [String] = []
            if relationship.isOrdered { notes.append("ordered") }
            if relationship.deleteRule != .nullify { notes.append(relationship.deleteRule.modelName.lowercased()) }
            return relationship.name + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
        }
        return describe(link.relationship) + (link.inverse.map { " / " + describe($0) } ?? "")
    }
}
