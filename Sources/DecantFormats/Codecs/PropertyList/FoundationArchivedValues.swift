public import DecantCore
public import Foundation

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
    /// Creates the reader.
    public init() {}

    public func value(at path: [String], inArchive data: Data) throws(ArchivedValueFailure) -> Value {
        let root: FoundationValue
        do {
            root = try FoundationValue(archivedData: data)
        } catch {
            if !KeyedArchive.looksLikeKeyedArchive(data) {
                throw ArchivedValueFailure(.notAnArchive, "the value is not a keyed archive (\(data.count) bytes)")
            }
            throw ArchivedValueFailure(
                error.className == nil ? .unreadable : .foreignClass, error.reason, className: error.className)
        }
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
