

extension MigrationPlan {
    /// The file a complete mapping (an Xcode mapping model) was read from.
    static func filePath(of model: MappingModel) -> String? {
        model.entityMappings.lazy.compactMap { mapping -> String? in
            if case .file(let path) = mapping.origin { return path }
            return nil
        }.first
    }

    /// What stops a complete mapping from running between `source` and `destination`: entities and properties it
    /// names that the versions do not have.
    static func problems(of model: MappingModel, from source: ObjectModel, to destination: ObjectModel)
        -> [MigrationProblem]
    {
        var problems: [MigrationProblem] = []
        for mapping in model.entityMappings {
            if let name = mapping.sourceEntity, source.entity(named: name) == nil {
                problems.append(
                    MigrationProblem(
                        entity: name, message: "\(mapping.name) reads \(name), which \(source.versionName ?? "?") does not have"))
            }
            guard let name = mapping.destinationEntity else { continue }
            guard let entity = destination.entity(named: name) else {
                problems.append(
                    MigrationProblem(
                        entity: name,
                        message: "\(mapping.name) makes \(name), which \(destination.versionName ?? "?") does not have"))
                continue
            }
            let (attributes, relationships) = destination.properties(of: entity)
            let names = Set(attributes.map(\.name) + relationships.map(\.name))
            for property in mapping.attributes + mapping.relationships where !names.contains(property.name) {
                problems.append(
                    MigrationProblem(
                        entity: name, property: property.name,
                        message: "\(mapping.name) sets \(name).\(property.name), which is not a property of \(name)"))
            }
        }
        return problems
    }

    /// What stops the expressions of `model` from running against `source`: fetches of entities it does not have,
    /// with predicates Decant cannot read or computed rather than written, and `unsupported(…)` parts of an Xcode
    /// mapping model. With the mapping `file` the hop was read from, each problem is located at its line.
    static func expressionProblems(of model: MappingModel, from source: ObjectModel, file: ExplicitMapping? = nil)
        -> [MigrationProblem]
    {
        var problems: [MigrationProblem] = []
        for mapping in model.entityMappings {
            let name = mapping.destinationEntity ?? mapping.sourceEntity ?? mapping.name
            let entry = file?.entities.first { $0.key == mapping.name || ($0.name == nil && $0.destination == name) }
            let lines =
                (entry?.attributes ?? []).map { ("attributes", $0) }
                + (entry?.relationships ?? []).map { ("relationships", $0) }
            var expressions: [(ValueExpression, Location?)] = (mapping.attributes + mapping.relationships).compactMap {
                property in
                guard let expression = property.expression else { return nil }
                let line = lines.first { $0.1.name == property.name }
                let location = line.map { group, line in
                    Location(
                        path: file?.path, line: line.line,
                        keyPath: "entities.\(entry?.key ?? name).\(group).\(line.name)")
                }
                return (expression, location)
            }
            let entryLocation = entry.map { Location(path: file?.path, line: $0.line, keyPath: "entities.\($0.key)") }
            expressions += [mapping.filter, mapping.findOrCreate].compactMap { $0 }.map { ($0, entryLocation) }
            for (expression, location) in expressions {
                for path in expression.sourceKeyPaths {
                    guard let entity = mapping.sourceEntity.flatMap({ source.entity(named: $0) }),
                        let miss = Self.missingStep(of: path, from: entity, in: source)
                    else { continue }
                    // A mapping model's own name, where no file line names the place already.
                    let file = location != nil ? "" : Self.filePath(of: model).map { ($0.split(separator: "/").last.map(String.init) ?? $0) + ": " } ?? ""
                    problems.append(
                        MigrationProblem(
                            entity: name,
                            message: "\(file)\(mapping.name) reads $source.\(path.joined(separator: ".")), and \(miss.entity) "
                                + "has no property \(miss.name)"
                                + (miss.nearest.map { " (did you mean \($0)?)" } ?? ""),
                            location: location ?? Self.filePath(of: model).map { Location(path: $0) },
                            isMappingFileMistake: true))
                }
                for request in expression.fetchRequests {
                    guard let fetched = source.entity(named: request.entity) else {
                        problems.append(
                            MigrationProblem(
                                entity: name,
                                message: "\(mapping.name) fetches \(request.entity), which \(source.versionName ?? "?") does "
                                    + "not have", location: location, isMappingFileMistake: true))
                        continue
                    }
                    let parsed = Result { try ObjectPredicate(parsing: request.predicate, source: "FETCH", isFetch: true) }
                    guard case .success(let predicate) = parsed else {
                        let message = parsed.failure?.message ?? ""
                        problems.append(
                            MigrationProblem(
                                entity: name,
                                message: "\(mapping.name) fetches with a predicate Decant cannot read: \(message)",
                                advice: "a fetch predicate compares the fetched objects' key paths with constants or "
                                    + "with $source.keyPath (the object being mapped), and ANY/ALL/NONE a to-many one",
                                location: location, isMappingFileMistake: true))
                        continue
                    }
                    // Its key paths name properties of the fetched entity, its $source ones of the mapped entity.
                    let mapped = mapping.sourceEntity.flatMap { source.entity(named: $0) }
                    let steps = predicate.keyPaths.map { (fetched, $0, "") }
                        + (mapped.map { entity in predicate.sourceKeyPaths.map { (entity, $0, "$source.") } } ?? [])
                    for path in predicate.unquantifiedKeyPaths {
                        var entity: String? = fetched.name
                        guard let step = path.first(where: { step in
                            defer { entity = entity.flatMap { source.propertyKind(step, of: $0)?.destination } }
                            return entity.map { source.isToMany(step, of: $0) } ?? false
                        }) else { continue }
                        problems.append(
                            MigrationProblem(
                                entity: name,
                                message: "\(mapping.name) fetches \(request.entity) where \(path.joined(separator: ".")), "
                                    + "through the to-many \(step): compare it with ANY, ALL or NONE",
                                location: location, isMappingFileMistake: true))
                    }
                    for (entity, path, prefix) in steps {
                        guard let miss = Self.missingStep(of: path, from: entity, in: source) else { continue }
                        problems.append(
                            MigrationProblem(
                                entity: name,
                                message: "\(mapping.name) fetches \(request.entity) where \(prefix)"
                                    + "\(path.joined(separator: ".")), and \(miss.entity) has no property \(miss.name)"
                                    + (miss.nearest.map { " (did you mean \($0)?)" } ?? ""),
                                location: location, isMappingFileMistake: true))
                    }
                }
                for call in expression.computedFetches {
                    problems.append(
                        MigrationProblem(
                            entity: name,
                            message: "\(mapping.name): `\(call)` computes its entity or predicate; a fetch takes both "
                                + "written as texts (fetch('Folder', \"name BEGINSWITH 'w'\"))", location: location,
                            isMappingFileMistake: true))
                }
                for text in expression.unsupportedParts {
                    problems.append(
                        MigrationProblem(
                            entity: name,
                            message: "\(mapping.name) has an expression Decant cannot evaluate: \(text)",
                            advice: "write this mapping as a Decant mapping file, or register app code for it",
                            location: location))
                }
            }
        }
        return problems
    }

    /// The first step of `path` that names no property of the entity it is read from (its attributes, relationships
    /// and fetched properties, inherited ones included), with that entity and the nearest name; nil when every step
    /// does. A collection operator (`@count`) or a step past an attribute (into a transformable value) ends the check.
    static func missingStep(of path: [String], from start: Entity, in model: ObjectModel)
        -> (entity: String, name: String, nearest: String?)?
    {
        var entity = start
        for step in path {
            guard !step.hasPrefix("@") else { return nil }
            let (attributes, relationships) = model.properties(of: entity)
            if attributes.contains(where: { $0.name == step }) { return nil }
            if let relationship = relationships.first(where: { $0.name == step }) {
                guard let next = relationship.destinationEntity.flatMap({ model.entity(named: $0) }) else { return nil }
                entity = next
                continue
            }
            let fetched = ([entity] + model.ancestors(of: entity)).flatMap(\.fetchedProperties).map(\.name)
            if fetched.contains(step) { return nil }
            let names = attributes.map(\.name) + relationships.map(\.name) + fetched
            return (entity.name, step, Spelling.nearest(to: step, among: names))
        }
        return nil
    }

    /// Adds a problem to each hop for the app code its mappings call that `functions` does not have: an entity
    /// mapping's policy class, and `call(class, selector, …)` methods; and for the `$param` values it was not given.
    /// `plan` then exits 1 naming them.
    public mutating func requireHooks(_ functions: ValueExpressionFunctions) {
        for index in hops.indices {
            var missing: [MigrationProblem] = []
            for mapping in hops[index].mapping.entityMappings {
                let entity = mapping.destinationEntity ?? mapping.sourceEntity ?? mapping.name
                if let policy = mapping.policy, functions.policy(named: policy) == nil {
                    missing.append(
                        MigrationProblem(
                            entity: entity,
                            message: "\(mapping.name) needs the migration policy \(policy), which is app code",
                            advice: "write the hop as a Decant mapping file and give it with --mapping "
                                + "(docs/USAGE.md: Mapping files), or register an EntityMigrationPolicy as \(policy) (ValueExpressionFunctions."
                                + "registerPolicy) in a Swift program that runs the migration"))
                }
                let expressions =
                    (mapping.attributes + mapping.relationships).compactMap(\.expression) + [mapping.filter, mapping.findOrCreate].compactMap { $0 }
                for name in Set(expressions.flatMap(\.parameterNames)).sorted() where functions.parameters[name] == nil {
                    missing.append(
                        MigrationProblem(
                            entity: entity,
                            message: "\(mapping.name) reads $param.\(name), which the run was not given",
                            advice: "give --param \(name)=VALUE (ValueExpressionFunctions.parameters in the library)"))
                }
                for (className, selector) in expressions.flatMap(\.methodCalls)
                where !functions.knowsMethod(className, selector: selector) && functions.policy(named: className) == nil {
                    missing.append(
                        MigrationProblem(
                            entity: entity,
                            message: "\(mapping.name) calls \(className) \(selector), which is app code",
                            advice: "register it with ValueExpressionFunctions.registerMethod(\"\(className)\", "
                                + "selector: \"\(selector)\")"))
                }
            }
            hops[index].problems += missing
        }
    }
}

extension Result where Failure == any Error {
    /// The error, as a ``DecantError`` when it is one.
    fileprivate var failure: DecantError? {
        guard case .failure(let error) = self else { return nil }
        return error as? DecantError ?? DecantError(.malformedInput, "\(error)")
    }
}
