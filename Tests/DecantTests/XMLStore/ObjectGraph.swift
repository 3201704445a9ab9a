import Decant
import Foundation
import Testing

/// Compares two stores' objects up to renumbering: a format with its own id space (the XML store's `z102`, the
/// binary store's reference data) gives objects new primary keys on the way back, so objects are compared by what
/// they hold and what they are related to (colour refinement, ordered relationships in order), not by their keys.
enum ObjectGraph {
    /// One signature per object, per entity, sorted; equal graphs (up to renumbering) give equal signatures.
    static func signatures(_ records: [String: [Record]], model: ObjectModel, rounds: Int = 4) -> [String: [String]] {
        var ordered: [String: Set<String>] = [:]
        for entity in model.entities {
            let layout = RecordLayout(entity: entity.name, in: model)
            ordered[entity.name] = Set(layout?.relationships.filter(\.isOrdered).map(\.name) ?? [])
        }
        func key(_ reference: ObjectReference) -> String {
            let root = model.entity(named: reference.entity).map { model.root(of: $0).name } ?? reference.entity
            return "\(root)/\(reference.id)"
        }
        var colour: [String: String] = [:]
        for (entity, list) in records {
            for record in list { colour[key(record.reference)] = "\(entity)|\(record.values)" }
        }
        for _ in 0..<rounds {
            var next: [String: String] = [:]
            for (entity, list) in records {
                let layout = RecordLayout(entity: entity, in: model)
                for record in list {
                    var parts = [colour[key(record.reference)] ?? "?"]
                    for (index, value) in record.relationships.enumerated() {
                        let name = layout?.relationships[index].name ?? "\(index)"
                        switch value {
                        case .toOne(let reference):
                            parts.append(name + "=" + (reference.map { colour[key($0)] ?? "dangling" } ?? "nil"))
                        case .toMany(let references):
                            var members = references.map { colour[key($0)] ?? "dangling" }
                            if ordered[entity]?.contains(name) != true { members.sort() }
                            parts.append(name + "=[" + members.joined(separator: ",") + "]")
                        case .viaInverse: parts.append(name + "=inverse")
                        }
                    }
                    next[key(record.reference)] = String(parts.joined(separator: ";").hashValue)
                }
            }
            colour = next
        }
        var result: [String: [String]] = [:]
        for (entity, list) in records { result[entity] = list.map { colour[key($0.reference)] ?? "?" }.sorted() }
        return result
    }

    /// Expects `after` to hold the same objects as `before`, up to renumbering.
    static func expectEqual(_ before: [String: [Record]], _ after: [String: [Record]], model: ObjectModel) {
        for entity in model.entities {
            #expect((before[entity.name] ?? []).count == (after[entity.name] ?? []).count, "\(entity.name)")
            // Attribute values alone, as sorted lists: a readable first difference.
            let old = (before[entity.name] ?? []).map { "\($0.values)" }.sorted()
            let new = (after[entity.name] ?? []).map { "\($0.values)" }.sorted()
            for (was, now) in zip(old, new) where was != now { Issue.record("\(entity.name): \(was) became \(now)") }
        }
        let old = signatures(before, model: model)
        let new = signatures(after, model: model)
        for entity in model.entities where (old[entity.name] ?? []) != (new[entity.name] ?? []) {
            Issue.record("\(entity.name): relationships differ")
        }
    }
}
