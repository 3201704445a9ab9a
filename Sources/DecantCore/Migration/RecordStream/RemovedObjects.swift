/// The source objects one hop of a migration removes on purpose (``DeleteRules``), as the hop asks about them.
///
/// They are held in a ``KeySet``, which may spill to disk. A hop asks while it maps objects, where it cannot throw: a
/// lookup the set fails to answer (its temporary file failing) answers false and is kept, and
/// ``checkLookups()`` throws it. Call that after the run and before trusting its output, as ``StoreMigration`` does.
///
/// ```swift
/// let removed: RemovedObjects = [ObjectReference(entity: "Folder", id: .primaryKey(2))]
/// removed.contains(ObjectReference(entity: "Folder", id: .primaryKey(2)))    // true
/// try removed.checkLookups()
/// ```
public struct RemovedObjects: ExpressibleByArrayLiteral {
    private let objects: any KeySet
    private let failures = LookupFailures()

    /// The objects `objects` holds.
    public init(_ objects: any KeySet) {
        self.objects = objects
    }

    /// The objects listed, held in memory.
    public init(arrayLiteral references: ObjectReference...) {
        let objects = InMemoryKeySet()
        for reference in references { _ = objects.insert(SetKey(reference.id), in: reference.entity) }
        self.objects = objects
    }

    /// How many objects are removed.
    public var count: Int { objects.count }

    /// Whether no object is removed.
    public var isEmpty: Bool { objects.isEmpty }

    /// Whether the object `reference` names is removed; false, with the error kept for ``checkLookups()``, when the
    /// set cannot tell.
    public func contains(_ reference: ObjectReference) -> Bool {
        do {
            return try objects.contains(reference)
        } catch {
            failures.record(error)
            return false
        }
    }

    /// Throws the first error a lookup met, if any.
    public func checkLookups() throws {
        if let error = failures.first { throw error }
    }
}

@available(*, unavailable)
extension RemovedObjects: Sendable {}

/// The first error a ``RemovedObjects`` lookup met, shared by its copies.
private final class LookupFailures {
    private(set) var first: (any Error)?

    func record(_ error: any Error) {
        if first == nil { first = error }
    }
}
