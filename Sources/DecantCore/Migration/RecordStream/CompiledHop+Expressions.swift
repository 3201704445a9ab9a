import Foundation

/// How a mapping's expressions become a destination object's values and relationships, and what they read.
extension CompiledHop {
    /// Appends to `pending` the destination attributes' values for the object at `row`, in layout order; the first
    /// value the object cannot take (an overflow under `collectsRejects`, a type, a required nil) is returned.
    /// - Throws: an expression's error, located at the object and property.
    func attributeValues(
        row index: Int,
        of batch: RecordBatch,
        under mapping: Mapping,
        in attributeIndex: [String: Int],
        into pending: inout [Pending],
        collectsRejects: Bool
    ) throws -> Reject? {
        let sourceEntity = batch.layout.entityName
        let id = batch.id(at: index)
        var failure: Reject?
        for (position, plan) in mapping.attributes.enumerated() {
            var next: Pending
            switch plan {
            case .copy(let column): next = .cell(batch.cell(row: index, column: column))
            case .null: next = .value(.null)
            case .constant(let value): next = .value(value)
            case .expression(let expression):
                let value: Value
                let converted: Value?
                let property = mapping.attributeNames[position]
                do {
                    (value, converted) = try located("\(sourceEntity)/\(id)", mapping, property: property) {
                        let value = try self.value(of: expression, row: index, of: batch, in: attributeIndex)
                        // A Transformable value into a plain type reads its archive; a plain value into a
                        // Transformable attribute is archived.
                        let type = mapping.attributeTypes[position]
                        return (value, try functions.converted(value, to: type, reading: property))
                    }
                } catch var error as DecantError where error.underlyingError is ValueOverflow {
                    // This object's value cannot be computed: a reject under --rejects, else the error names
                    // the object and the property.
                    guard collectsRejects else {
                        error.location?.keyPath = property
                        if case .file(let path) = mapping.entityMapping.origin, error.location?.path == nil {
                            error.location?.path = path
                        }
                        throw error
                    }
                    failure =
                        failure
                        ?? Reject(
                            entity: mapping.destination, object: "\(sourceEntity)/\(id)", property: property,
                            rule: "overflow", value: (error.underlyingError as? ValueOverflow)?.operation)
                    pending.append(.value(.null))
                    continue
                }
                if let converted {
                    next = .value(converted)
                } else {
                    next = .value(.null)
                    failure =
                        failure
                        ?? Reject(
                            entity: mapping.destination,
                            object: "\(sourceEntity)/\(id)",
                            property: mapping.attributeNames[position],
                            rule: "type",
                            value: value.text
                        )
                }
            }
            var isCopy = false
            if case .copy = plan { isCopy = true }
            if mapping.required[position], failure == nil, !(isCopy && leavesCopiedNilsToValidator) {
                let isNull: Bool
                switch next {
                case .cell(let cell): isNull = cell.kind == .null
                case .value(let value): isNull = value.isNull
                }
                if isNull {
                    failure = Reject(
                        entity: mapping.destination,
                        object: "\(sourceEntity)/\(id)",
                        property: mapping.attributeNames[position],
                        rule: "optional"
                    )
                }
            }
            pending.append(next)
        }
        return failure
    }

    /// Lists the object `failure` names as rejected under `collectsRejects`.
    /// - Throws: `.validationFailed` naming the object, property and hop otherwise.
    func refuse(
        _ failure: Reject, under mapping: Mapping, rejects: inout [Reject], collectsRejects: Bool
    ) throws {
        guard collectsRejects else {
            throw DecantError(
                .validationFailed,
                "\(failure.property ?? "a value") of \(failure.object) "
                    + (failure.rule == "optional"
                        ? "is nil, but \(mapping.destination).\(failure.property ?? "") is required "
                            + "in \(name)"
                        : "(\(failure.value ?? "nil")) cannot become a "
                            + "\(mapping.destination).\(failure.property ?? "") value in \(name)"),
                at: Location(entity: mapping.destination, object: failure.object, keyPath: failure.property)
            )
        }
        rejects.append(failure)
    }

    /// Appends the destination relationships of the object at `row` to `out`'s open record, in layout order: each
    /// member followed to the object it became.
    func appendRelationships(
        row index: Int, of batch: RecordBatch, under mapping: Mapping, into out: inout RecordBatch
    ) throws {
        let sourceEntity = batch.layout.entityName
        let id = batch.id(at: index)
        let sourceAttributeCount = batch.layout.attributes.count
        for (position, plan) in mapping.relationships.enumerated() {
            let toMany = mapping.relationshipIsToMany[position]
            switch plan {
            case .none:
                if toMany { out.appendReferenceList([]) } else { out.appendReference(nil) }
            case .expression(let expression, let target):
                let members = try located("\(sourceEntity)/\(id)", mapping) {
                    try destinationObjects(expression, batch: batch, row: index, target: target)
                }
                if toMany { out.appendReferenceList(members) } else { out.appendReference(members.first) }
            case .sourceObject(let target):
                // None when the mapping into `target` filters this object out: it makes no object from it.
                let maker = referenceTarget(sourceEntity: sourceEntity, target: target).flatMap { found in
                    mappingsBySource[sourceEntity]?.first { $0.name == found.mapping }
                }
                let made = try maker.map { try keeps(row: index, of: batch, under: $0) } ?? true
                var reference = made ? mapped(ObjectReference(entity: sourceEntity, id: id), target: target) : nil
                if made, let maker, maker.findOrCreate != nil {
                    reference = try keyedIdentity(row: index, of: batch, under: maker).map {
                        ObjectReference(entity: maker.destination, id: .external($0))
                    }
                }
                if toMany {
                    out.appendReferenceList(reference.map { [$0] } ?? [])
                } else {
                    out.appendReference(reference)
                }
            case .source(let column, let target):
                let cell = batch.cell(row: index, column: sourceAttributeCount + column)
                switch cell.kind {
                case .reference, .externalReference:
                    let reference = mapped(batch.reference(of: cell), target: target)
                    if toMany {
                        out.appendReferenceList(reference.map { [$0] } ?? [])
                    } else {
                        out.appendReference(reference)
                    }
                case .referenceList:
                    let start = Int(cell.integer)
                    var members: [ObjectReference] = []
                    for offset in 0..<Int(cell.length) {
                        let member = batch.references[start + offset]
                        if let reference = mapped(batch.reference(of: member), target: target) {
                            members.append(reference)
                            if !toMany { break }
                        }
                    }
                    if toMany { out.appendReferenceList(members) } else { out.appendReference(members.first) }
                case .viaInverse:
                    if toMany { out.appendViaInverse() } else { out.appendReference(nil) }
                default:
                    if toMany { out.appendReferenceList([]) } else { out.appendReference(nil) }
                }
            }
        }
    }

    /// Whether `mapping`'s `where` filter keeps the source object at `row` (true without a filter).
    func keeps(row index: Int, of batch: RecordBatch, under mapping: Mapping) throws -> Bool {
        guard let filter = mapping.filter else { return true }
        let sourceEntity = batch.layout.entityName
        let attributeIndex = sourceAttributeIndex[sourceEntity] ?? [:]
        let value = try located("\(sourceEntity)/\(batch.id(at: index))", mapping) {
            try self.value(of: filter, row: index, of: batch, in: attributeIndex)
        }
        return value.isTrue
    }

    /// The identity of the object `mapping` finds or creates for the source object at `row`: the mapping's name and
    /// its key's value (`CountryToContinent#10004`); nil when the key is nil (the object makes none).
    func keyedIdentity(row index: Int, of batch: RecordBatch, under mapping: Mapping) throws -> String? {
        guard let findOrCreate = mapping.findOrCreate else { return nil }
        let sourceEntity = batch.layout.entityName
        let attributeIndex = sourceAttributeIndex[sourceEntity] ?? [:]
        let value = try located("\(sourceEntity)/\(batch.id(at: index))", mapping) {
            try self.value(of: findOrCreate, row: index, of: batch, in: attributeIndex)
        }
        guard value != .null else { return nil }
        return "\(mapping.name)#\(value.text ?? "")"
    }

    /// Runs `body`, naming the object, mapping and destination `property` in the error it throws; what it read as
    /// nil from archives counts under them.
    func located<T>(
        _ object: @autoclosure () -> String, _ mapping: Mapping, property: String? = nil, _ body: () throws -> T
    ) throws -> T {
        defer { functions.archiveReads?.settle(entity: mapping.destination, object: object(), property: property) }
        do {
            return try body()
        } catch let error as DecantError {
            throw DecantError(
                error.code,
                "\(mapping.name) (\(name)): \(error.message)",
                at: Location(entity: mapping.destination, object: object(), keyPath: property),
                underlyingError: error.underlyingError
            )
        }
    }

    /// The value of `expression` for the object at `row`, its `fetchCount(…)` calls that read `$source` counted for
    /// that object.
    func value(
        of expression: ValueExpression, row: Int, of batch: RecordBatch, in attributeIndex: [String: Int]
    ) throws -> Value {
        let source = { (path: [String]) in try self.sourceValue(path, batch: batch, row: row, in: attributeIndex) }
        guard countsPerObject else { return try expression.evaluate(source: source, functions: functions) }
        var counts: [FetchRequest: Int] = [:]
        for request in expression.fetchRequests where graph.readsSource(request) && counts[request] == nil {
            counts[request] = try graph.objects(fetchedBy: request, source: source).count
        }
        let counted = expression.replacingCalls { name, arguments in
            guard name == "fetchCount", let request = FetchRequest(arguments), let count = counts[request] else {
                return nil
            }
            return .literal(.integer(Int64(count)))
        }
        return try counted.evaluate(source: source, functions: functions)
    }

    /// The value of `$source.<path>` for the object at `row`: its own attribute straight from the batch, anything
    /// further through the ``SourceGraph``.
    func sourceValue(
        _ path: [String], batch: RecordBatch, row: Int, in attributeIndex: [String: Int]
    ) throws -> Value {
        if path.count == 1, let position = attributeIndex[path[0]] { return batch.value(row: row, attribute: position) }
        switch try navigate(path, batch: batch, row: row) {
        case .value(let value): return value
        case .values(let values) where values.count <= 1: return values.first ?? .null
        case .values(let values):
            throw DecantError(
                .malformedInput,
                "$source.\(path.joined(separator: ".")) gives \(values.count) values, not one; reduce them with "
                    + "@count, @sum, @avg, @min or @max"
            )
        case .objects:
            throw DecantError(
                .malformedInput,
                "$source.\(path.joined(separator: ".")) gives objects, not a value (it belongs to a relationship)"
            )
        }
    }

    /// The destination objects a relationship expression gives for the object at `row`: the source objects it
    /// reaches, each as the object it became (under the named mapping for `mapped('Name', …)`).
    func destinationObjects(
        _ expression: ValueExpression, batch: RecordBatch, row: Int, target: String
    ) throws -> [ObjectReference] {
        switch expression {
        case .call("mapped", let arguments) where arguments.count == 2:
            guard case .literal(.string(let name)) = arguments[0], let named = targetsByName[name] else {
                throw DecantError(
                    .malformedInput,
                    "`\(expression)`: the first argument must name an entity mapping of \(self.name) (it has "
                        + targetsByName.keys.sorted().joined(separator: ", ") + ")"
                )
            }
            // The object this very source object became under a mapping whose `where` does not take it: none.
            let current = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row))
            let namedMapping = mappingsBySource[batch.layout.entityName]?.first { $0.name == name }
            return try sourceObjects(arguments[1], batch: batch, row: row).compactMap { reference in
                if !removedObjects.isEmpty && removedObjects.contains(reference) { return nil }
                if reference == current, let namedMapping, !(try keeps(row: row, of: batch, under: namedMapping)) {
                    return nil
                }
                guard named.findsByKey else {
                    return ObjectReference(entity: named.entity, id: named.identity(of: reference.id))
                }
                // A found-or-created object is known by its key, which only this source object's values give.
                guard reference == current, let namedMapping else {
                    throw DecantError(
                        .planNotExecutable,
                        "`\(expression)`: \(name) finds or creates its objects by a key; mapped('\(name)', …) can follow "
                            + "only $source (the object being mapped), whose key it reads")
                }
                return try keyedIdentity(row: row, of: batch, under: namedMapping).map {
                    ObjectReference(entity: named.entity, id: .external($0))
                }
            }
        case .call("mappedThrough", let arguments) where arguments.count == 2:
            return try sourceObjects(arguments[1], batch: batch, row: row).compactMap { mapped($0, target: target) }
        default:
            return try sourceObjects(expression, batch: batch, row: row).compactMap { mapped($0, target: target) }
        }
    }

    /// The source objects `expression` (`$source…`, or nil) reaches from the object at `row`.
    private func sourceObjects(_ expression: ValueExpression, batch: RecordBatch, row: Int) throws -> [ObjectReference] {
        switch expression {
        case .literal(.null): return []
        case .call("fetch", let arguments):
            guard let request = FetchRequest(arguments) else {
                throw DecantError(.malformedInput, "`\(expression)` needs an entity name and a predicate as texts")
            }
            let attributeIndex = sourceAttributeIndex[batch.layout.entityName] ?? [:]
            return try graph.objects(fetchedBy: request) {
                try sourceValue($0, batch: batch, row: row, in: attributeIndex)
            }
        case .source(let path):
            switch try navigate(path, batch: batch, row: row) {
            case .objects(let objects, _): return objects
            case .value(.null): return []
            default:
                throw DecantError(.malformedInput, "`\(expression)` gives values, not objects, for a relationship")
            }
        default:
            throw DecantError(
                .malformedInput,
                "`\(expression)` cannot give a relationship's objects (write $source.keyPath, mapped('Mapping', "
                    + "$source.keyPath) or mappedThrough('relationship', $source.keyPath))"
            )
        }
    }
}
