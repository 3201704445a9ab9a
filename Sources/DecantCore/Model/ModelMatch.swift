public import Foundation

/// How a store's entity hashes compare with the versions of a model: the matching version, or the nearest one
/// with an entity-by-entity explanation.
public struct ModelMatch: Sendable, Hashable {
    /// Why one entity differs.
    public enum Difference: Sendable, Hashable, CustomStringConvertible {
        /// The entity is in both, with different version hashes.
        case hashMismatch(entity: String, store: Data, model: Data)
        /// The model has the entity, the store does not.
        case missingFromStore(entity: String)
        /// The store has the entity, the model does not.
        case missingFromModel(entity: String)

        public var description: String {
            switch self {
            case .hashMismatch(let entity, let store, let model):
                "\(entity): hash differs (store \(store.base64EncodedString()), model \(model.base64EncodedString()))"
            case .missingFromStore(let entity): "\(entity): in the model, not in the store"
            case .missingFromModel(let entity): "\(entity): in the store, not in the model"
            }
        }
    }

    /// The version whose hashes equal the store's, if any. When several have them (a version that changed only
    /// what the hashes leave out), the one whose version identifiers equal the store's
    /// `NSStoreModelVersionIdentifiers`, then the later one in the bundle's order.
    public var matched: ObjectModel?
    /// When several versions have the store's hashes: which was taken, and why.
    public var choice: String?
    /// When nothing matches: the version with the most equal entity hashes.
    public var nearest: ObjectModel?
    /// When nothing matches: how the nearest version differs.
    public var differences: [Difference]

    /// Compares store hashes with every version of `bundle`; `storeIdentifiers` (the store's
    /// `NSStoreModelVersionIdentifiers`) choose between versions with the same hashes.
    public init(storeHashes: [String: Data], storeIdentifiers: [String] = [], bundle: ModelBundle) {
        let equal = bundle.versions.filter { $0.entityVersionHashes == storeHashes }
        if let last = equal.last {
            let named = equal.filter { Set($0.versionIdentifiers) == Set(storeIdentifiers) }
            let chosen = named.last ?? last
            self.matched = chosen
            self.nearest = nil
            self.differences = []
            if equal.count > 1 {
                let names = equal.map { $0.versionName ?? "?" }.joined(separator: ", ")
                let identifiers = storeIdentifiers.map { "\"\($0)\"" }.joined(separator: ", ")
                let why =
                    named.isEmpty
                    ? "the later version (the store's version identifiers [\(identifiers)] name none of them)"
                    : named.count == 1
                        ? "the store's version identifiers [\(identifiers)] name it"
                        : "the later of those the store's version identifiers [\(identifiers)] name"
                self.choice = "\(names) have the store's entity hashes; \(chosen.versionName ?? "?") is taken: \(why)"
            }
            return
        }
        var best: (model: ObjectModel, score: Int, differences: [Difference])?
        for version in bundle.versions.reversed() {
            let hashes = version.entityVersionHashes
            let differences = Self.differences(store: storeHashes, model: hashes)
            let score = hashes.filter { storeHashes[$0.key] == $0.value }.count * 2 - differences.count
            if best == nil || score > best?.score ?? .min { best = (version, score, differences) }
        }
        self.matched = nil
        self.nearest = best?.model
        self.differences = best?.differences ?? []
    }

    /// The per-entity differences between two sets of hashes, sorted by entity name.
    public static func differences(store: [String: Data], model: [String: Data]) -> [Difference] {
        var result: [Difference] = []
        for name in Set(store.keys).union(model.keys).sorted() {
            switch (store[name], model[name]) {
            case (let stored?, let modelled?) where stored != modelled:
                result.append(.hashMismatch(entity: name, store: stored, model: modelled))
            case (nil, _?): result.append(.missingFromStore(entity: name))
            case (_?, nil): result.append(.missingFromModel(entity: name))
            default: break
            }
        }
        return result
    }
}

extension ModelMatch {
    /// The model a store was written with, resolved by its entity version hashes: the version of `bundle` whose
    /// hashes match (between several, as ``matched`` says, by `storeIdentifiers`), or without a bundle the model the store carries (`cachedModel`, from a `Z_MODELCACHE`),
    /// after proving that its recomputed hashes equal the stored ones.
    ///
    /// ```swift
    /// let model = try ModelMatch.resolve(storeHashes: hashes, bundle: bundle, cachedModel: nil, at: here)
    /// ```
    /// - Throws: `.modelMismatch` naming the nearest version and what differs; `.unsupportedFormat` when there is
    ///   neither a bundle nor a cached model (`missingModelAdvice` says why); `.malformedInput` when the cached
    ///   model does not match the stored hashes.
    public static func resolve(
        storeHashes: [String: Data], storeIdentifiers: [String] = [], bundle: ModelBundle?, cachedModel: ObjectModel?,
        missingModelAdvice: String = "the store carries no model; give its model with --model", at location: Location
    ) throws -> ObjectModel {
        if let bundle {
            let match = ModelMatch(storeHashes: storeHashes, storeIdentifiers: storeIdentifiers, bundle: bundle)
            if let matched = match.matched { return matched }
            let nearest = match.nearest?.versionName ?? "none"
            let detail = match.differences.map(\.description).joined(separator: "; ")
            throw DecantError(
                .modelMismatch, "no version of \(bundle.name) matches the store; nearest is \(nearest): \(detail)",
                at: location)
        }
        guard let cachedModel else { throw DecantError(.unsupportedFormat, missingModelAdvice, at: location) }
        let differences = differences(store: storeHashes, model: cachedModel.entityVersionHashes)
        guard differences.isEmpty else {
            throw DecantError(
                .malformedInput,
                "the store's own model does not match its metadata hashes: "
                    + differences.map(\.description).joined(separator: "; "), at: location)
        }
        return cachedModel
    }
}
