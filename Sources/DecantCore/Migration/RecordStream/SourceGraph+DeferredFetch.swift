import Foundation

extension SourceGraph {
    /// A fetch answered after the pass over the source: its predicate follows a relationship, compares a to-many key
    /// path with `ANY`/`ALL`/`NONE`, or reads the object being mapped (`$source`, substituted per object as Core
    /// Data's `fetchRequestForSourceEntityNamed:predicateString:` does).
    ///
    /// It keeps every object of its entity as a candidate. One that reads `$source` tests the candidates for each
    /// mapped object, or, when the predicate says `attribute == $source.keyPath` among its top-level `AND` terms,
    /// looks that key up in an index of the candidates' values and tests only those found (the common "find by key").
    struct DeferredFetch: Sendable {
        let predicate: ObjectPredicate
        /// The objects of the fetched entity and its sub-entities, in reading order.
        var candidates: [ObjectReference] = []
        /// A top-level `attribute == $source.keyPath` term to look candidates up by (its options fold the key).
        private let key: (attribute: String, options: ObjectPredicate.ComparisonOptions)?
        /// Per folded value of the key attribute, the positions of the candidates holding it.
        private var positionsByKey: [Key: [Int]] = [:]
        /// Candidates whose key is NaN, which compares equal to every number.
        private var notANumber: [Int] = []

        var readsSource: Bool { !predicate.sourceKeyPaths.isEmpty }

        init(predicate: ObjectPredicate, entity: Entity, in model: ObjectModel) {
            self.predicate = predicate
            let concrete = [entity] + model.descendants(of: entity)
            key = predicate.conjuncts.lazy.compactMap { term -> (String, ObjectPredicate.ComparisonOptions)? in
                guard case .comparison(let left, .equal, let right, let options) = term else { return nil }
                switch (left, right) {
                case (.keyPath(let path), .source), (.source, .keyPath(let path)):
                    guard path.count == 1,
                        concrete.allSatisfy({ model.propertyKind(path[0], of: $0.name)?.isAttribute == true })
                    else { return nil }
                    return (path[0], options)
                default: return nil
                }
            }.first
        }

        /// Builds the index of the key attribute's values, from what `graph` kept of the candidates.
        mutating func index(using graph: SourceGraph) {
            guard let key else { return }
            for (position, candidate) in candidates.enumerated() {
                let value = graph.values(at: [key.attribute], of: candidate).first ?? .null
                if let folded = Key(value, key.options) {
                    positionsByKey[folded, default: []].append(position)
                } else {
                    notANumber.append(position)
                }
            }
        }

        /// The positions of the candidates that may satisfy `predicate` (this fetch's, its `$source` substituted):
        /// those the key finds; nil for every candidate.
        func positions(for predicate: ObjectPredicate) -> [Int]? {
            guard let key, let value = Self.keyValue(in: predicate, attribute: key.attribute, options: key.options),
                let folded = Key(value, key.options)
            else { return nil }
            let found = positionsByKey[folded] ?? []
            guard !notANumber.isEmpty, ObjectPredicate.number(value) != nil else { return found }
            return (found + notANumber).sorted()
        }

        /// The constant the key term compares with, once `$source` is substituted.
        private static func keyValue(
            in predicate: ObjectPredicate, attribute: String, options: ObjectPredicate.ComparisonOptions
        ) -> Value? {
            for case .comparison(let left, .equal, let right, let folding) in predicate.conjuncts where folding == options {
                switch (left, right) {
                case (.keyPath([attribute]), .value(let value)), (.value(let value), .keyPath([attribute])):
                    return value
                default: continue
                }
            }
            return nil
        }
    }

    /// A value as ``ObjectPredicate``'s `==` tells values apart: nil, text by its folded Unicode scalars, anything
    /// numeric (numbers, Booleans, dates) by its number, any other value as itself.
    private enum Key: Hashable {
        case null
        case text([Unicode.Scalar])
        case number(Double)
        case other(Value)

        /// The key of `value`; nil for NaN, which no key stands for.
        init?(_ value: Value, _ options: ObjectPredicate.ComparisonOptions) {
            if value.isNull {
                self = .null
            } else if let text = ObjectPredicate.string(value) {
                self = .text(Array(ObjectPredicate.fold(text, options)))
            } else if let number = ObjectPredicate.number(value) {
                guard !number.isNaN else { return nil }
                self = .number(number)
            } else {
                self = .other(value)
            }
        }
    }
}
