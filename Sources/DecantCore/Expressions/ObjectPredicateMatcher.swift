/// A predicate made ready to test many objects: each `IN` over a list of constants looks the value up in sets
/// (one per kind of value, `[c]` and `[d]` folded once), so testing an object costs the same whatever the list's
/// length, rather than comparing with every item. Answers are exactly ``ObjectPredicate/evaluate(_:)``'s.
///
/// ```swift
/// let matcher = ObjectPredicateMatcher(try ObjectPredicate(parsing: "uid IN[c] {'a', 'b'}"))
/// matcher.evaluate { _ in .string("A") }   // true
/// ```
public struct ObjectPredicateMatcher: Sendable {
    private indirect enum Node: Sendable {
        /// Evaluated as it is.
        case predicate(ObjectPredicate)
        case and([Node])
        case or([Node])
        case not(Node)
        /// `operand IN {constants}`.
        case member(PredicateOperand, ConstantSet)
    }

    private let root: Node

    /// Prepares `predicate`.
    public init(_ predicate: ObjectPredicate) {
        root = Self.node(predicate)
    }

    private static func node(_ predicate: ObjectPredicate) -> Node {
        switch predicate {
        case .and(let terms): return .and(terms.map(node))
        case .or(let terms): return .or(terms.map(node))
        case .not(let term): return .not(node(term))
        case .comparison(let left, .in, .list(let items), let options):
            guard let set = ConstantSet(items, options) else { return .predicate(predicate) }
            return .member(left, set)
        default: return .predicate(predicate)
        }
    }

    /// Whether the object `lookUp` describes satisfies the predicate (see ``ObjectPredicate/evaluate(_:)``).
    public func evaluate(_ lookUp: ([String]) throws -> Value) rethrows -> Bool {
        try Self.evaluate(root, lookUp)
    }

    private static func evaluate(_ node: Node, _ lookUp: ([String]) throws -> Value) rethrows -> Bool {
        switch node {
        case .predicate(let predicate): return try predicate.evaluate(lookUp)
        case .and(let terms):
            for term in terms where try !evaluate(term, lookUp) { return false }
            return true
        case .or(let terms):
            for term in terms where try evaluate(term, lookUp) { return true }
            return false
        case .not(let term): return try !evaluate(term, lookUp)
        case .member(let operand, let set):
            guard case .single(let value) = try operand.resolve(lookUp) else { return false }
            return set.contains(value)
        }
    }

    /// The constants of an `IN` list, sorted by how ``ObjectPredicate/equal(_:_:_:)`` compares them: texts by their
    /// folded Unicode scalars, numbers (and dates, Booleans) by their numeric value, nil with nil, anything else
    /// one by one.
    private struct ConstantSet: Sendable {
        let options: ObjectPredicate.ComparisonOptions
        var texts: Set<[Unicode.Scalar]> = []
        var numbers: Set<Double> = []
        /// A NaN compares as equal to every number (neither less nor greater), as in the stream's order.
        var hasNaN = false
        var hasNull = false
        var others: [Value] = []

        /// The set of `items`, or nil when one is not a constant.
        init?(_ items: [PredicateOperand], _ options: ObjectPredicate.ComparisonOptions) {
            self.options = options
            var pending = items[...]
            while let item = pending.popFirst() {
                switch item {
                case .keyPath, .source: return nil
                case .list(let nested): pending = nested[...] + pending
                case .value(let value): add(value)
                }
            }
        }

        private mutating func add(_ value: Value) {
            if value.isNull {
                hasNull = true
            } else if let text = ObjectPredicate.string(value) {
                texts.insert(Array(ObjectPredicate.fold(text, options)))
            } else if let number = ObjectPredicate.number(value) {
                if number.isNaN { hasNaN = true } else { numbers.insert(number) }
            } else {
                others.append(value)
            }
        }

        func contains(_ value: Value) -> Bool {
            if value.isNull { return hasNull }
            if let text = ObjectPredicate.string(value) {
                return texts.contains(Array(ObjectPredicate.fold(text, options)))
            }
            if let number = ObjectPredicate.number(value) {
                return hasNaN || (number.isNaN ? !numbers.isEmpty : numbers.contains(number))
            }
            return others.contains { ObjectPredicate.equal(value, $0, options) }
        }
    }
}
