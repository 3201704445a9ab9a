import DecantCore
import DecantCodecs

/// What the columns of an entity file hold, from its header: the object id (`_id`), attributes and to-one
/// relationships, each found by name exactly, then ignoring case, then as snake_case for camelCase (`created_at`
/// for `createdAt`).
struct CSVColumns {
    /// The header of the object-id column.
    static let idHeader = "_id"

    /// What one column holds.
    enum Target: Hashable {
        case id
        case attribute(Int)
        case toOne(Int)
    }

    /// Per column, what it holds.
    let targets: [Target]
    /// The header names as written.
    let names: [String]
    /// Per layout attribute, its column.
    let attributeColumns: [Int?]
    /// Per layout relationship, its column (to-one relationships only).
    let relationshipColumns: [Int?]
    /// The `_id` column.
    let idColumn: Int?

    /// Why CSV holds no composite attribute: a composite is a dictionary of typed elements, and a nil composite and
    /// one whose elements are all nil would read alike from empty cells; JSON and NDJSON keep it as a nested object.
    static func compositeRefusal(entity: String, attribute: String, at location: Location) -> DecantError {
        var place = location
        place.entity = entity
        place.keyPath = attribute
        return DecantError(
            .unsupportedFormat,
            "\(entity).\(attribute) is a composite attribute, which CSV does not hold: convert to or from JSON or NDJSON, "
                + "where a composite is a nested object of its elements", at: place)
    }

    /// Maps the header `names` of an entity file onto `layout`.
    /// - Throws: `.malformedInput` naming the column for an unknown, ambiguous or repeated header, or a to-many
    ///   relationship (whose members belong in a join file).
    init(header names: [String], layout: RecordLayout, location: (Int) -> Location) throws {
        var targets: [Target] = []
        var attributeColumns = [Int?](repeating: nil, count: layout.attributes.count)
        var relationshipColumns = [Int?](repeating: nil, count: layout.relationships.count)
        var idColumn: Int?
        let candidates: [(name: String, target: Target)] =
            layout.attributes.enumerated().map { ($0.element.name, Target.attribute($0.offset)) }
            + layout.relationships.enumerated().filter { !$0.element.isToMany }.map {
                ($0.element.name, .toOne($0.offset))
            }
        for (column, raw) in names.enumerated() {
            let name = CSVValueText.trimmingSpaces(raw)
            let target: Target
            if name == Self.idHeader {
                target = .id
            } else if let found = try Self.match(name, among: candidates, at: location(column)) {
                target = found
            } else if let toMany = layout.relationships.first(where: { $0.isToMany && Self.matches(name, $0.name) }) {
                throw DecantError(
                    .malformedInput,
                    "column \(name.debugDescription) is the to-many relationship \(toMany.name): its members go in the "
                        + "join file \(layout.entityName).\(toMany.name).csv (owner, member)",
                    at: location(column))
            } else {
                let known = [Self.idHeader] + candidates.map(\.name)
                throw DecantError(
                    .malformedInput,
                    "unknown column \(name.debugDescription): \(layout.entityName) has no attribute or to-one "
                        + "relationship of that name (expected \(known.joined(separator: ", ")))",
                    at: location(column))
            }
            if let earlier = targets.firstIndex(of: target) {
                throw DecantError(
                    .malformedInput,
                    "columns \(earlier + 1) (\(names[earlier].debugDescription)) and \(column + 1) "
                        + "(\(name.debugDescription)) hold the same property", at: location(column))
            }
            targets.append(target)
            switch target {
            case .id: idColumn = column
            case .attribute(let index):
                if layout.attributes[index].type == .composite {
                    throw Self.compositeRefusal(
                        entity: layout.entityName, attribute: layout.attributes[index].name, at: location(column))
                }
                attributeColumns[index] = column
            case .toOne(let index): relationshipColumns[index] = column
            }
        }
        self.targets = targets
        self.names = names
        self.attributeColumns = attributeColumns
        self.relationshipColumns = relationshipColumns
        self.idColumn = idColumn
    }

    /// The candidate `name` stands for (``PropertyNameMatch``).
    /// - Throws: `.malformedInput` when two candidates fit equally.
    static func match<Target>(
        _ name: String, among candidates: [(name: String, target: Target)], at location: Location
    ) throws -> Target? {
        let found = PropertyNameMatch.match(name, among: candidates)
        if found.count > 1 {
            throw DecantError(
                .malformedInput,
                "column \(name.debugDescription) could be any of \(found.map(\.name).joined(separator: ", "))",
                at: location)
        }
        return found.first?.target
    }

    /// Whether a header fits a property name by any of the rules.
    static func matches(_ header: String, _ property: String) -> Bool {
        (0..<PropertyNameMatch.ruleCount).contains {
            PropertyNameMatch.normalized(header, rule: $0) == PropertyNameMatch.normalized(property, rule: $0)
        }
    }
}

/// What the columns of a join file (`Entity.relationship.csv`) hold: `owner`, `member` and, for an ordered
/// relationship, `position` (names matched ignoring case).
struct CSVJoinColumns {
    let owner: Int
    let member: Int
    let position: Int?

    /// Columns at known positions.
    init(owner: Int, member: Int, position: Int?) {
        self.owner = owner
        self.member = member
        self.position = position
    }

    /// Maps a join file's header.
    /// - Throws: `.malformedInput` for an unknown or repeated column, or without `owner` and `member`.
    init(header names: [String], location: (Int) -> Location, fileLocation: Location) throws {
        var found: [String: Int] = [:]
        for (column, raw) in names.enumerated() {
            let name = CSVValueText.trimmingSpaces(raw).lowercased()
            guard ["owner", "member", "position"].contains(name) else {
                throw DecantError(
                    .malformedInput,
                    "unknown column \(raw.debugDescription) in a join file: expected owner, member and position",
                    at: location(column))
            }
            guard found[name] == nil else {
                throw DecantError(.malformedInput, "a second \(name) column", at: location(column))
            }
            found[name] = column
        }
        guard let owner = found["owner"], let member = found["member"] else {
            throw DecantError(
                .malformedInput, "a join file needs an owner and a member column (and position for an ordered one)",
                at: fileLocation)
        }
        self.owner = owner
        self.member = member
        self.position = found["position"]
    }
}
