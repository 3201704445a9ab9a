public import DecantCore
import Foundation
import DecantCodecs

extension XcodeMappingModel {
    /// The mapping as the engine runs it, between `source` and `destination` (the hop's versions).
    ///
    /// An Xcode mapping model is complete: a destination entity no entity mapping makes gets no objects, and a
    /// destination property without an expression keeps its default value, as Core Data's migration manager does.
    /// Expressions become Decant's (``ValueExpression``): `$source.a.b` stays a key path,
    /// `destinationInstancesForEntityMappingNamed:` becomes `mapped('Name', …)`,
    /// `destinationInstancesForSourceRelationshipNamed:` becomes `mappedThrough('name', …)`, and app code
    /// (`FUNCTION($entityPolicy, …)`, `FUNCTION(CAST("Class", "Class"), …)`) becomes `call('Class', 'selector', …)`.
    /// An expression with no Decant counterpart becomes `unsupported('…')`, which the plan reports.
    ///
    /// ```swift
    /// let mapping = xcode.mappingModel(from: v2, to: v3)
    /// let plan = try MigrationPlan(bundle: bundle, source: storeModel, mappingModels: [mapping])
    /// ```
    public func mappingModel(from source: ObjectModel, to destination: ObjectModel) -> MappingModel {
        var entityMappings: [EntityMapping] = []
        for xcode in self.entityMappings {
            let policy = xcode.migrationPolicyClassName.flatMap { $0.isEmpty ? nil : $0 }
            let translate = { (node: NSExpressionNode?) -> ValueExpression? in
                node.map { Self.expression($0, policy: policy) }
            }
            let sourceName = xcode.sourceEntityName.flatMap { $0.isEmpty ? nil : $0 }
            let destinationName = xcode.destinationEntityName.flatMap { $0.isEmpty ? nil : $0 }
            let kind: EntityMapping.Kind
            switch (sourceName, destinationName, xcode.type) {
            case (nil, _, _), (_, _, .add): kind = .add
            case (_, nil, _), (_, _, .remove): kind = .remove
            default:
                kind =
                    xcode.sourceEntityVersionHash != nil
                        && xcode.sourceEntityVersionHash == xcode.destinationEntityVersionHash && policy == nil
                    ? .copy : .transform
            }
            var attributes: [PropertyMapping] = []
            var relationships: [PropertyMapping] = []
            if kind != .remove, kind != .add, let name = destinationName, let entity = destination.entity(named: name) {
                let (destinationAttributes, destinationRelationships) = destination.properties(of: entity)
                let byName = Dictionary(
                    (xcode.attributeMappings + xcode.relationshipMappings).map { ($0.name, $0) },
                    uniquingKeysWith: { first, _ in first })
                for attribute in destinationAttributes where !attribute.isTransient {
                    let expression = byName[attribute.name].flatMap { translate($0.valueExpression) }
                    attributes.append(
                        PropertyMapping(
                            name: attribute.name,
                            expression: expression ?? attribute.defaultLiteral.map(ValueExpression.literal),
                            change: .explicit))
                }
                for relationship in destinationRelationships where !relationship.isTransient {
                    relationships.append(
                        PropertyMapping(
                            name: relationship.name,
                            expression: byName[relationship.name].flatMap { translate($0.valueExpression) },
                            change: .explicit))
                }
            }
            entityMappings.append(
                EntityMapping(
                    name: xcode.name,
                    kind: kind,
                    source: kind == .add ? nil : sourceName,
                    destination: kind == .remove ? nil : destinationName,
                    filter: xcode.sourceExpression.flatMap(Self.filter),
                    attributes: attributes,
                    relationships: relationships,
                    origin: .file(path),
                    policy: policy
                ))
        }
        return MappingModel(
            sourceVersion: source.versionName ?? "?",
            destinationVersion: destination.versionName ?? "?",
            entityMappings: entityMappings
        )
    }

    /// The `where` of a FETCH source expression: nil for `TRUEPREDICATE` (every object).
    static func filter(_ source: NSExpressionNode) -> ValueExpression? {
        guard case .fetch(let request, _, _) = source,
            case .function(_, "fetchRequestForSourceEntityNamed:predicateString:", let arguments) = request,
            arguments.count == 2, case .constant(.string(let text)) = arguments[1]
        else { return .call("unsupported", [.literal(.string(source.description))]) }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed == "TRUEPREDICATE" { return nil }
        guard let predicate = try? ObjectPredicate(parsing: trimmed, source: "filter predicate") else {
            return .call("unsupported", [.literal(.string(text))])
        }
        return expression(predicate) ?? .call("unsupported", [.literal(.string(text))])
    }

    /// A predicate of comparisons, AND, OR and NOT as a value expression; nil for other operators.
    static func expression(_ predicate: ObjectPredicate) -> ValueExpression? {
        switch predicate {
        case .constant(let flag): return .literal(.bool(flag))
        case .not(let term): return expression(term).map { .unary(.not, $0) }
        case .quantified: return nil
        case .and(let terms), .or(let terms):
            let parts = terms.compactMap(expression)
            guard parts.count == terms.count, let first = parts.first else { return nil }
            let op: ValueExpression.BinaryOperator
            if case .and = predicate { op = .and } else { op = .or }
            return parts.dropFirst().reduce(first) { .binary(op, $0, $1) }
        case .comparison(let left, let op, let right, let options):
            guard options.isEmpty, let left = operand(left), let right = operand(right) else { return nil }
            let binary: ValueExpression.BinaryOperator
            switch op {
            case .equal: binary = .equal
            case .notEqual: binary = .notEqual
            case .less: binary = .less
            case .lessOrEqual: binary = .lessOrEqual
            case .greater: binary = .greater
            case .greaterOrEqual: binary = .greaterOrEqual
            default: return nil
            }
            return .binary(binary, left, right)
        }
    }

    private static func operand(_ operand: PredicateOperand) -> ValueExpression? {
        switch operand {
        case .keyPath(let path): .source(keyPath: path)
        case .value(let value): .literal(value)
        case .list, .source: nil
        }
    }

    /// An `NSExpression` as a value expression; `policy` is the class `$entityPolicy` stands for.
    static func expression(_ node: NSExpressionNode, policy: String?) -> ValueExpression {
        func unsupported() -> ValueExpression { .call("unsupported", [.literal(.string(node.description))]) }
        switch node {
        case .constant(let value): return .literal(value)
        case .variable("source"): return .source(keyPath: [])
        case .function(.variable("source"), "valueForKeyPath:", let arguments) where arguments.count == 1:
            guard case .keyPath(let path) = arguments[0] else { return unsupported() }
            return .source(keyPath: path.split(separator: ".").map(String.init))
        case .function(.variable("manager"), let selector, let arguments)
        where arguments.count == 2
            && (selector == "destinationInstancesForEntityMappingNamed:sourceInstances:"
                || selector == "destinationInstancesForSourceRelationshipNamed:sourceInstances:"):
            let function = selector.hasPrefix("destinationInstancesForEntity") ? "mapped" : "mappedThrough"
            return .call(function, [expression(arguments[0], policy: policy), expression(arguments[1], policy: policy)])
        case .function(.variable("entityPolicy"), let selector, let arguments):
            guard let policy else { return unsupported() }
            return .call(
                "call", [.literal(.string(policy)), .literal(.string(selector))] + arguments.map { expression($0, policy: policy) })
        case .function(.function(.classConstant, "castObject:toType:", let cast), let selector, let arguments)
        where cast.count == 2:
            guard case .constant(.string(let className)) = cast[0] else { return unsupported() }
            return .call(
                "call",
                [.literal(.string(className)), .literal(.string(selector))] + arguments.map { expression($0, policy: policy) })
        case .function(.classConstant(let className), let selector, let arguments) where className != "_NSPredicateUtilities":
            return .call(
                "call",
                [.literal(.string(className)), .literal(.string(selector))] + arguments.map { expression($0, policy: policy) })
        case .fetch(let request, _, let countOnly):
            guard case .function(_, "fetchRequestForSourceEntityNamed:predicateString:", let arguments) = request,
                arguments.count == 2, case .constant(.string(let entity)) = arguments[0],
                case .constant(.string(let predicate)) = arguments[1]
            else { return unsupported() }
            return .call(countOnly ? "fetchCount" : "fetch", [.literal(.string(entity)), .literal(.string(predicate))])
        case .function(.classConstant("_NSPredicateUtilities"), let selector, let arguments):
            let values = arguments.map { expression($0, policy: policy) }
            switch (selector, values.count) {
            case ("add:to:", 2): return .binary(.add, values[0], values[1])
            case ("from:subtract:", 2): return .binary(.subtract, values[0], values[1])
            case ("multiply:by:", 2): return .binary(.multiply, values[0], values[1])
            case ("divide:by:", 2): return .binary(.divide, values[0], values[1])
            case ("modulus:by:", 2): return .binary(.remainder, values[0], values[1])
            case ("lowercase:", 1): return .call("lowercase", values)
            case ("uppercase:", 1): return .call("uppercase", values)
            case ("abs:", 1): return .call("abs", values)
            case ("floor:", 1): return .call("floor", values)
            case ("ceiling:", 1): return .call("ceil", values)
            case ("now", 0): return .call("now", [])
            default: return unsupported()
            }
        default: return unsupported()
        }
    }
}
