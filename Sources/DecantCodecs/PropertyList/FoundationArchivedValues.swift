public import DecantCore
public import Foundation
import Synchronization

/// Foundation's keyed archives read and written through ``FoundationValue``, for a migration's key paths into
/// Transformable values (`$source.dictionaryData.title`, `$source.emails[0]`), `unarchived(…)`, `archived(…)` and
/// plain values given to Transformable attributes. The `Decant` module installs it for every migration.
///
/// ```swift
/// var functions = ValueExpressionFunctions()
/// functions.archivedValues = FoundationArchivedValues()
/// let title = try FoundationArchivedValues().value(at: ["title"], inArchive: blob)   // .string("Dune")
/// ```
///
/// An archive is read whole, with ``FoundationValue``'s limits, before a key is looked up: one holding a class outside
/// Foundation's plain ones anywhere fails as `NSSecureUnarchiveFromData` fails on it.
public struct FoundationArchivedValues: ArchivedValueCoding {
    /// The archives decoded last, with what each gave: a mapping usually reads several keys of one object's archive
    /// (`$source.info.title`, `$source.info.address.city`), which is then decoded once.
    private let recent = RecentArchives()

    /// Creates the reader.
    public init() {}

    public func value(at path: [String], inArchive data: Data) throws(ArchivedValueFailure) -> Value {
        let root = try recent.decoded(data)
        var current = root
        for step in path {
            if step == "@count" {
                switch current {
                case .collection(let elements, _): return .integer(Int64(elements.count))
                case .dictionary(let entries, _): return .integer(Int64(entries.count))
                default: return .null
                }
            }
            if let index = ValueExpression.index(ofStep: step) {
                guard case .collection(let elements, _) = current, elements.indices.contains(index) else {
                    return .null
                }
                current = elements[index]
            } else {
                guard case .dictionary(let entries, _) = current, let entry = entries.first(where: { $0.key == step })
                else { return .null }
                current = entry.value
            }
        }
        switch current {
        case .collection, .dictionary:
            if path.isEmpty { return .transformable(data) }
            do {
                return .transformable(try current.archivedData())
            } catch {
                throw ArchivedValueFailure(
                    .unreadable, "cannot archive what \(path.joined(separator: ".")) holds: \(error)")
            }
        default:
            return current.plainValue
        }
    }

    public func archivedData(of value: Value) throws(ArchivedValueFailure) -> Data {
        if case .transformable(let data) = value { return data }
        do {
            return try FoundationValue(value).archivedData()
        } catch let failure as ArchivedValueFailure {
            throw failure
        } catch {
            throw ArchivedValueFailure(.notArchivable, "cannot archive \(value.text ?? "nil"): \(error)")
        }
    }
}

/// The last few archives ``FoundationArchivedValues`` decoded, and what each gave (a value or the failure).
private final class RecentArchives: Sendable {
    /// How many archives are kept: the Transformable attributes one object's expressions read.
    static let capacity = 4

    private let entries = Mutex<[(data: Data, result: Result<FoundationValue, ArchivedValueFailure>)]>([])

    /// The value `data` archives, decoded unless it is one of the last few.
    func decoded(_ data: Data) throws(ArchivedValueFailure) -> FoundationValue {
        let known = entries.withLock { entries in entries.first { $0.data == data }?.result }
        let result = known ?? Self.decode(data)
        if known == nil {
            entries.withLock { entries in
                if entries.count == Self.capacity { entries.removeFirst() }
                entries.append((data, result))
            }
        }
        return try result.get()
    }

    private static func decode(_ data: Data) -> Result<FoundationValue, ArchivedValueFailure> {
        do {
            return .success(try FoundationValue(archivedData: data))
        } catch {
            if !KeyedArchive.looksLikeKeyedArchive(data) {
                return .failure(
                    ArchivedValueFailure(.notAnArchive, "the value is not a keyed archive (\(data.count) bytes)"))
            }
            return .failure(
                ArchivedValueFailure(
                    error.className == nil ? .unreadable : .foreignClass, error.reason, className: error.className))
        }
    }
}

extension FoundationValue {
    /// The record value of a string, number, date, data, URL, UUID or `NSNull` (nil for a collection).
    var plainValue: Value {
        switch self {
        case .null, .collection, .dictionary: .null
        case .bool(let flag): .bool(flag)
        case .integer(let integer): .integer(integer)
        case .real(let real): .double(real)
        case .string(let text, _): .string(text)
        case .data(let bytes, _): .data(bytes)
        case .date(let seconds): .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .url(let text): .uri(text)
        case .uuid(let uuid): .uuid(uuid)
        }
    }

    /// The Foundation value `NSKeyedArchiver` archives for a record value: a string as `NSString`, numbers and
    /// Booleans as `NSNumber`, a date as `NSDate`, data as `NSData`, a URI as `NSURL`, a UUID as `NSUUID`, a composite
    /// as an `NSDictionary` (keys in name order).
    /// - Throws: ``ArchivedValueFailure`` for a decimal, an external-data reference or an archive.
    init(_ value: Value) throws(ArchivedValueFailure) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let integer): self = .integer(integer)
        case .double(let real): self = .real(real)
        case .string(let text): self = .string(text)
        case .data(let bytes): self = .data(bytes)
        case .date(let date): self = .date(date.timeIntervalSinceReferenceDate)
        case .uri(let text): self = .url(text)
        case .uuid(let uuid): self = .uuid(uuid)
        case .composite(let elements):
            var entries: [Entry] = []
            for name in elements.keys.sorted() {
                entries.append(Entry(name, try FoundationValue(elements[name] ?? .null)))
            }
            self = .dictionary(entries)
        case .decimal, .externalDataReference, .transformable:
            throw ArchivedValueFailure(
                .notArchivable, "\(value.text ?? "the value") is no value of Foundation's plain classes to archive")
        }
    }
}
