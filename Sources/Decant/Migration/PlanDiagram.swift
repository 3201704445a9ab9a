public import DecantCore
import Foundation

/// A migration plan as a diagram for a pull request: the versions from source to destination, and per hop (inferred
/// or from a mapping file) its entity mappings (copied, transformed, added, removed, split into several), the
/// properties that change (renamed, added, widened, …), and destructive changes highlighted. Mermaid flowchart or
/// Graphviz DOT; the same plan always gives the same text, every label quoted.
///
/// ```swift
/// print(PlanDiagram(plan: report.plan, style: .mermaid).text)
/// ```
public struct PlanDiagram: Sendable {
    /// The plan drawn.
    public let plan: MigrationPlan
    /// The language.
    public let style: ModelDiagram.Style

    /// A diagram of `plan`.
    public init(plan: MigrationPlan, style: ModelDiagram.Style) {
        self.plan = plan
        self.style = style
    }

    /// One entity mapping as drawn: its lines and whether it loses data.
    struct Box {
        var id: String
        var lines: [String]
        var destructive: Bool
    }

    /// The versions in order: the source, then each hop's destination.
    var versions: [String] { [plan.sourceVersion] + plan.hops.map { $0.destination.versionName ?? "?" } }

    /// The boxes of hop `index`.
    func boxes(of index: Int) -> [Box] {
        let hop = plan.hops[index]
        let destructive = plan.destructiveChanges.filter { change in
            switch change {
            case .entityRemoved(let name, _), .attributeRemoved(let name, _, _), .relationshipRemoved(let name, _, _),
                .toManyNarrowed(let name, _, _), .filtered(let name, _), .relationshipEmptied(let name, _, _, _):
                name == hop.name
            }
        }
        let sources = hop.mapping.entityMappings.compactMap(\.sourceEntity)
        return hop.mapping.entityMappings.enumerated().map { position, mapping in
            let split = mapping.sourceEntity.map { name in sources.filter { $0 == name }.count > 1 } ?? false
            var header = "\(mapping.sourceEntity ?? "(none)") → \(mapping.destinationEntity ?? "(none)"): "
            header += mapping.kind == .add ? "added" : mapping.kind == .remove ? "removed" : mapping.kind.rawValue
            if split { header += ", split" }
            if case .file(let file) = mapping.origin { header += " (\(URL(fileURLWithPath: file).lastPathComponent))" }
            var lines = [header]
            if let filter = mapping.filter { lines.append("where \(filter)") }
            for property in mapping.attributes + mapping.relationships {
                if case .copied = property.change { continue }
                lines.append("\(property.name): \(property.change)")
            }
            let losses = destructive.filter { change in
                switch change {
                case .entityRemoved(_, let entity), .filtered(_, let entity): entity == mapping.sourceEntity
                case .attributeRemoved(_, let entity, _), .relationshipRemoved(_, let entity, _):
                    entity == mapping.sourceEntity
                case .toManyNarrowed(_, let entity, _), .relationshipEmptied(_, let entity, _, _):
                    entity == mapping.destinationEntity
                }
            }
            lines += losses.map { "data lost: \($0.description.components(separatedBy: ": ").dropFirst().joined(separator: ": "))" }
            return Box(id: "hop\(index + 1)m\(position)", lines: lines, destructive: !losses.isEmpty)
        }
    }

    /// The diagram text.
    public var text: String {
        style == .mermaid ? mermaid : dot
    }

    private var mermaid: String {
        var lines = ["flowchart LR", "    classDef destructive fill:#fdd,stroke:#c00,color:#600"]
        for (index, version) in versions.enumerated() {
            lines.append("    v\(index)[\"\(Self.mermaidLabel(version))\"]")
        }
        for (index, hop) in plan.hops.enumerated() {
            let kind = hop.isInferred ? "inferred" : "mapping file"
            lines.append("    v\(index) -->|\"hop \(index + 1), \(kind)\"| v\(index + 1)")
            lines.append("    subgraph hop\(index + 1)[\"\(Self.mermaidLabel("hop \(index + 1): \(hop.name) (\(kind))"))\"]")
            lines.append("        direction TB")
            for box in boxes(of: index) {
                lines.append("        \(box.id)[\"\(box.lines.map(Self.mermaidLabel).joined(separator: "<br/>"))\"]")
                if box.destructive { lines.append("        class \(box.id) destructive") }
            }
            lines.append("    end")
        }
        return lines.joined(separator: "\n")
    }

    private var dot: String {
        var lines = [
            "digraph \(ModelDiagram.dotString("\(plan.sourceVersion) → \(plan.destinationVersion)")) {",
            "    graph [rankdir=LR, fontname=\"Helvetica\", compound=true];",
            "    node [shape=box, fontname=\"Helvetica\", style=rounded];",
            "    edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for (index, version) in versions.enumerated() {
            lines.append("    v\(index) [label=\(ModelDiagram.dotString(version)), shape=ellipse, style=solid];")
        }
        for (index, hop) in plan.hops.enumerated() {
            let kind = hop.isInferred ? "inferred" : "mapping file"
            lines.append("    v\(index) -> v\(index + 1) [label=\(ModelDiagram.dotString("hop \(index + 1), \(kind)"))];")
            lines.append("    subgraph cluster_hop\(index + 1) {")
            lines.append("        label=\(ModelDiagram.dotString("hop \(index + 1): \(hop.name) (\(kind))"));")
            for box in boxes(of: index) {
                let label = box.lines.map { ModelDiagram.dotString($0).dropFirst().dropLast() + "\\l" }.joined()
                let color = box.destructive ? ", color=\"#cc0000\", fontcolor=\"#660000\", style=\"rounded,filled\", fillcolor=\"#ffdddd\"" : ""
                lines.append("        \(box.id) [label=\"\(label)\"\(color)];")
            }
            lines.append("    }")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// Text inside a quoted Mermaid label: quotes and angle brackets as entities.
    static func mermaidLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "#amp;").replacingOccurrences(of: "\"", with: "#quot;")
            .replacingOccurrences(of: "<", with: "#lt;").replacingOccurrences(of: ">", with: "#gt;")
    }
}
