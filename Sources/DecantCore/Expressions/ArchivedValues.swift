public import Foundation
import Synchronization

/// Reads into the keyed archives that Transformable (and app-archived Binary) attributes hold, and archives plain
/// values: what a mapping's `$source.dictionaryData.title`, `$source.emails[0]`, `unarchived(…)` and a plain value
/// given to a Transformable attribute need.
///
/// DecantCore decodes no archive itself: the `Decant` module installs Foundation's reader, the one
/// `convert --decode-transformables` uses, in ``ValueExpressionFunctions/archivedValues`` for every migration.
///
/// ```swift
/// var functions = ValueExpressionFunctions()
/// functions.archivedValues = FoundationArchivedValues()                       // from DecantFormats
/// try functions.archivedValues?.value(at: ["title"], inArchive: blob)         // .string("Dune")
/// ```
public protocol ArchivedValueCoding: Sendable {
    /// The value `path` reaches inside the keyed archive `data`: a key reads a dictionary, `[n]` the n-th element of
    /// an array or set (archive order), `@count` the number of elements. A missing key, an index out of range, or a
    /// step into something that is no collection gives ``Value/null`` (as `valueForKey:` on an `NSDictionary` does).
    /// Strings, numbers, dates, data, URLs (``Value/uri(_:)``) and UUIDs come back as values; a dictionary or array
    /// as ``Value/transformable(_:)``, archived again.
    /// - Throws: ``ArchivedValueFailure`` when `data` is no keyed archive, is damaged or beyond the reader's limits,
    ///   or holds a class outside Foundation's plain ones.
    func value(at path: [String], inArchive data: Data) throws(ArchivedValueFailure) -> Value

    /// `value` archived as `NSKeyedArchiver.archivedData(withRootObject:)` lays it out.
    /// - Throws: ``ArchivedValueFailure`` for a value no Foundation class holds.
    func archivedData(of value: Value) throws(ArchivedValueFailure) -> Data
}

/// Why a value could not be read out of, or written as, a keyed archive.
public struct ArchivedValueFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The bytes are no keyed archive (another transformer's own bytes).
        case notAnArchive
        /// A damaged archive, or one beyond the reader's limits (depth, size, a reference cycle).
        case unreadable
        /// The archive holds an object of a class outside Foundation's plain ones (an app class, `NSOrderedSet`):
        /// `NSSecureUnarchiveFromData` refuses it and the attribute reads as nil.
        case foreignClass
        /// A value no Foundation class holds (archiving).
        case notArchivable
    }

    /// What kind of failure.
    public var kind: Kind
    /// What was found, in one sentence without a trailing period.
    public var reason: String
    /// The first class outside Foundation's plain ones, for ``Kind/foreignClass``.
    public var className: String?

    /// Creates a failure.
    public init(_ kind: Kind, _ reason: String, className: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.className = className
    }

    public var description: String { reason }
}

extension ValueExpressionFunctions {
    /// The value `path` reaches inside the archive `value` holds (a Transformable or Binary value); nil stays nil.
    ///
    /// An archive holding a class outside Foundation's plain ones gives nil, as `NSSecureUnarchiveFromData` does, and
    /// is noted for the run's warnings (``ArchiveReads``).
    /// - Throws: `.malformedInput` when `value` is no archive (another transformer's bytes, or a value of another
    ///   type), is damaged or beyond the reader's limits, or when no reader is installed.
    package func readArchive(_ value: Value, at path: [String], reading what: @autoclosure () -> String) throws
        -> Value
    {
        let data: Data
        switch value {
        case .null: return .null
        case .transformable(let bytes), .data(let bytes): data = bytes
        default:
            throw DecantError(
                .malformedInput, "\(what()) reads into \(value.text ?? "a value"), which is no archived value")
        }
        guard let archivedValues else {
            throw DecantError(.internalError, "\(what()): no reader of keyed archives is installed")
        }
        do {
            return try archivedValues.value(at: path, inArchive: data)
        } catch where error.kind == .foreignClass {
            archiveReads?.note(error)
            return .null
        } catch {
            throw DecantError(.malformedInput, "\(what()): \(error.reason)", underlyingError: error)
        }
    }

    /// `value` as an attribute of `type` stores it (``Value/converted(to:)``), reading a Transformable value's
    /// archive for a plain type (an attribute that was Transformable and is now a String holds the string archived
    /// there) and archiving a plain value for a Transformable one; nil when it cannot be.
    /// - Throws: what ``readArchive(_:at:reading:)`` throws.
    package func converted(_ value: Value, to type: AttributeType, reading what: @autoclosure () -> String) throws
        -> Value?
    {
        switch (value, type) {
        case (.transformable, .transformable), (.transformable, .binary), (.null, _), (.data, .transformable):
            return value.converted(to: type)
        case (.transformable, .undefined), (.transformable, .objectID), (.transformable, .composite):
            return value.converted(to: type)
        case (.transformable, _):
            guard archivedValues != nil else { return value.converted(to: type) }
            let root = try readArchive(value, at: [], reading: what())
            if case .transformable = root { return nil }
            return root.converted(to: type)
        case (_, .transformable):
            guard let archivedValues else { return value.converted(to: type) }
            do {
                return .transformable(try archivedValues.archivedData(of: value))
            } catch {
                return nil
            }
        default:
            return value.converted(to: type)
        }
    }
}

/// The values a run read as nil because their archives hold classes outside Foundation's plain ones, noted where they
/// are read and told once per destination attribute at the end of the run (a `warning:`).
///
/// Shared by the copies of one hop's functions; each pass over the source before the run counts on its own.
package final class ArchiveReads: Sendable {
    private struct State {
        /// Read since the last ``take()``.
        var pending: [ArchivedValueFailure] = []
        /// Per `Entity.attribute`: how many values, the first objects, the classes met.
        var tallies: [String: (count: Int, objects: [String], classes: [String])] = [:]
    }

    private let state = Mutex(State())
    /// Whether anything was noted since the last ``settle(entity:object:property:)``: most evaluations read no archive
    /// that fails, and settle without taking the lock.
    private let hasPending = Atomic<Bool>(false)

    /// How many objects a warning names.
    static let named = 3

    package init() {}

    func note(_ failure: ArchivedValueFailure) {
        state.withLock { $0.pending.append(failure) }
        hasPending.store(true, ordering: .releasing)
    }

    /// Counts what was read since the last call as values of `property` of `object` (a destination entity's, or
    /// the entity mapping's own filter when `property` is nil).
    package func settle(entity: String, object: @autoclosure () -> String, property: String?) {
        guard hasPending.exchange(false, ordering: .acquiringAndReleasing) else { return }
        state.withLock { state in
            guard !state.pending.isEmpty else { return }
            let key = entity + (property.map { ".\($0)" } ?? "")
            var tally = state.tallies[key] ?? (0, [], [])
            tally.count += 1
            if tally.objects.count < Self.named { tally.objects.append(object()) }
            for name in state.pending.compactMap(\.className) where !tally.classes.contains(name) {
                tally.classes.append(name)
            }
            state.tallies[key] = tally
            state.pending.removeAll()
        }
    }

    /// One warning per destination attribute.
    package func diagnostics() -> [Diagnostic] {
        state.withLock { state in
            state.tallies.keys.sorted().compactMap { key in
                guard let tally = state.tallies[key] else { return nil }
                let more = tally.count > tally.objects.count ? ", …" : ""
                let classes = tally.classes.isEmpty ? "" : " (\(tally.classes.joined(separator: ", ")))"
                return Diagnostic(
                    .archivedValueReadAsNil,
                    "\(key): \(tally.count) value\(tally.count == 1 ? "" : "s") read from archives holding classes "
                        + "outside Foundation's plain ones\(classes) \(tally.count == 1 ? "was" : "were") nil, as "
                        + "NSSecureUnarchiveFromData gives them (\(tally.objects.joined(separator: ", "))\(more))",
                    // The source object, of its own entity.
                    at: Location(
                        entity: tally.objects.first?.split(separator: "/").first.map(String.init),
                        object: tally.objects.first))
            }
        }
    }
}

extension Diagnostic.Kind {
    /// A migration read into archived values whose archives hold classes outside Foundation's plain ones: read as
    /// nil, as `NSSecureUnarchiveFromData` gives them.
    public static let archivedValueReadAsNil = Diagnostic.Kind(rawValue: "archived-value-read-as-nil")
}

extension ValueExpression {
    /// Whether the expression calls `unarchived(…)` or `archived(…)`, which read and write keyed archives.
    public var callsArchiveFunctions: Bool {
        switch self {
        case .literal, .source: false
        case .unary(_, let operand): operand.callsArchiveFunctions
        case .binary(_, let left, let right): left.callsArchiveFunctions || right.callsArchiveFunctions
        case .call(let name, let arguments):
            name == "unarchived" || name == "archived" || arguments.contains { $0.callsArchiveFunctions }
        }
    }
}
