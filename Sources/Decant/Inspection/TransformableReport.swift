public import DecantCore
import DecantCodecs
import DecantFormats
import Foundation

/// What a store's Transformable attributes hold: per attribute, its value transformer, how many values are nil, are
/// keyed archives, are not, or cannot be read; the archived classes with their counts; and whether
/// `NSSecureUnarchiveFromData` with Foundation's default allowed classes would decode every value, naming the classes
/// that would fail and the first objects holding them. Binary attributes whose values an app archived itself
/// (`NSKeyedArchiver.archivedData`) are listed the same way when at least one value is a keyed archive.
///
/// ```swift
/// var audit = TransformableAudit(model: model, path: "Notes.sqlite")
/// while try reader.nextBatch(into: &batch) { audit.add(batch) }
/// let report = audit.report
/// print(report.text)      // Note.colors  transformer: default (NSKeyedUnarchiveFromData) …
/// ```
///
/// A value counts every object its archive holds, reachable from `$top`, once each, under its `$classname`
/// (``ArchiveClassCensus``: strings, numbers and bytes that Foundation writes without a class count as `NSString`,
/// `NSNumber`, `NSData`). A value decodes securely when every class it holds is one of
/// ``secureAllowedClasses`` or has one of them among its superclasses (`NSMutableDictionary`, `NSDecimalNumber`):
/// `NSSecureUnarchiveFromData` decodes a collection's elements with the same allowed classes as its root. An app
/// class fails even where its own `init(coder:)` would decode what it holds; the classes inside it are listed too,
/// so a custom transformer's allowed list can be written from the report.
public struct TransformableReport: Sendable, Codable, Hashable {
    /// The classes `NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses` allows by default (Foundation's
    /// plain classes, which `convert --decode-transformables` writes as JSON: ``FoundationValue``).
    public static let secureAllowedClasses = FoundationValue.secureAllowedClasses
    /// The transformer Core Data uses for an attribute whose model names none: the insecure
    /// `NSKeyedUnarchiveFromData`, about which Core Data warns at run time that it will one day use
    /// `NSSecureUnarchiveFromData` instead.
    public static let defaultTransformerName = "NSKeyedUnarchiveFromData"

    /// One class found in an attribute's values.
    public struct ClassCount: Sendable, Codable, Hashable {
        /// The `$classname`.
        public var name: String
        /// Objects of the class, over all values.
        public var objects: Int
        /// Values holding at least one.
        public var values: Int
        /// Whether `NSSecureUnarchiveFromData` with the default classes decodes it.
        public var isSecurelyDecodable: Bool
    }

    /// A class `NSSecureUnarchiveFromData` would refuse, with the first objects whose value holds it.
    public struct FailingClass: Sendable, Codable, Hashable {
        /// The `$classname`.
        public var name: String
        /// Values holding it.
        public var values: Int
        /// The first objects holding it (`Entity/p<pk>`), at most ``TransformableAudit/namedObjectLimit``.
        public var objects: [String]
    }

    /// What one Transformable attribute holds.
    public struct AttributeAudit: Sendable, Codable, Hashable {
        /// The entity that declares the attribute (its sub-entities' objects are counted too).
        public var entity: String
        /// The attribute's name.
        public var attribute: String
        /// `Transformable`, or `Binary` for a Binary attribute holding keyed archives.
        public var attributeType: String
        /// The transformer the model names (`valueTransformerName`), nil when it names none.
        public var valueTransformerName: String?
        /// The transformer Core Data uses: the model's, else ``TransformableReport/defaultTransformerName``; nil for
        /// a Binary attribute (the app unarchives its values itself).
        public var transformer: String?
        /// The value class the model names (`customClassName` / `NSAttributeValueClassName`), if any.
        public var valueClassName: String?
        /// Objects holding the attribute, nil values included.
        public var values: Int = 0
        /// Nil values.
        public var nilValues: Int = 0
        /// Values that are keyed archives Decant read.
        public var archives: Int = 0
        /// Values that are no keyed archive (another transformer's bytes, a plain property list).
        public var notArchives: Int = 0
        /// Values that look like keyed archives but that the archive reader refuses (a warning names each).
        public var unreadable: Int = 0
        /// The classes found, by name.
        public var classes: [ClassCount] = []
        /// Objects of classes not listed, once ``TransformableAudit/classLimit`` names were (hostile stores only).
        public var unlistedClassObjects: Int = 0
        /// Archives `NSSecureUnarchiveFromData` with the default classes would not decode.
        public var failingValues: Int = 0
        /// The classes it would refuse.
        public var failingClasses: [FailingClass] = []
        /// The first objects whose value is no archive.
        public var notArchiveObjects: [String] = []
        /// The first objects whose value is unreadable.
        public var unreadableObjects: [String] = []

        /// Whether `NSSecureUnarchiveFromData` with the default allowed classes decodes every value: nil values do,
        /// values that are no archive or that cannot be read do not. For a Binary attribute, whether the app's own
        /// secure unarchiving with those classes decodes every archive (its other values are bytes, not archives).
        public var decodesSecurely: Bool {
            failingValues == 0 && unreadable == 0 && (notArchives == 0 || transformer == nil)
        }

        private enum CodingKeys: String, CodingKey {
            case entity, attribute, attributeType, valueTransformerName, transformer, valueClassName, values, nilValues, archives
            case notArchives, unreadable, classes, unlistedClassObjects, failingValues, failingClasses
            case notArchiveObjects, unreadableObjects, decodesSecurely
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entity = try container.decode(String.self, forKey: .entity)
            attribute = try container.decode(String.self, forKey: .attribute)
            attributeType = try container.decode(String.self, forKey: .attributeType)
            valueTransformerName = try container.decodeIfPresent(String.self, forKey: .valueTransformerName)
            transformer = try container.decodeIfPresent(String.self, forKey: .transformer)
            valueClassName = try container.decodeIfPresent(String.self, forKey: .valueClassName)
            values = try container.decode(Int.self, forKey: .values)
            nilValues = try container.decode(Int.self, forKey: .nilValues)
            archives = try container.decode(Int.self, forKey: .archives)
            notArchives = try container.decode(Int.self, forKey: .notArchives)
            unreadable = try container.decode(Int.self, forKey: .unreadable)
            classes = try container.decode([ClassCount].self, forKey: .classes)
            unlistedClassObjects = try container.decode(Int.self, forKey: .unlistedClassObjects)
            failingValues = try container.decode(Int.self, forKey: .failingValues)
            failingClasses = try container.decode([FailingClass].self, forKey: .failingClasses)
            notArchiveObjects = try container.decode([String].self, forKey: .notArchiveObjects)
            unreadableObjects = try container.decode([String].self, forKey: .unreadableObjects)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entity, forKey: .entity)
            try container.encode(attribute, forKey: .attribute)
            try container.encode(attributeType, forKey: .attributeType)
            try container.encodeIfPresent(valueTransformerName, forKey: .valueTransformerName)
            try container.encodeIfPresent(transformer, forKey: .transformer)
            try container.encodeIfPresent(valueClassName, forKey: .valueClassName)
            try container.encode(values, forKey: .values)
            try container.encode(nilValues, forKey: .nilValues)
            try container.encode(archives, forKey: .archives)
            try container.encode(notArchives, forKey: .notArchives)
            try container.encode(unreadable, forKey: .unreadable)
            try container.encode(classes, forKey: .classes)
            try container.encode(unlistedClassObjects, forKey: .unlistedClassObjects)
            try container.encode(failingValues, forKey: .failingValues)
            try container.encode(failingClasses, forKey: .failingClasses)
            try container.encode(notArchiveObjects, forKey: .notArchiveObjects)
            try container.encode(unreadableObjects, forKey: .unreadableObjects)
            try container.encode(decodesSecurely, forKey: .decodesSecurely)
        }

        init(entity: String, attribute: Attribute) {
            self.entity = entity
            self.attribute = attribute.name
            self.attributeType = attribute.type.modelName
            let named = attribute.valueTransformerName.flatMap { $0.isEmpty ? nil : $0 }
            self.valueTransformerName = named
            self.transformer =
                attribute.type == .transformable ? named ?? TransformableReport.defaultTransformerName : nil
            self.valueClassName = attribute.valueClassName.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// Every persistent Transformable attribute of the model, and every Binary attribute holding a keyed archive, in
    /// model order.
    public var attributes: [AttributeAudit]
    /// One warning per unreadable value, located by entity, object and attribute (the first
    /// ``TransformableAudit/warningLimit``).
    public var warnings: [Diagnostic]
    /// Warnings past the limit, counted only.
    public var omittedWarnings: Int
    /// When the store could not be read to the end: why. The counts then cover the objects read before.
    public var incomplete: String?

    /// Whether there is nothing to tell: no attribute listed, and the store was read to the end.
    public var isEmpty: Bool { attributes.isEmpty && incomplete == nil }

    /// Whether `NSSecureUnarchiveFromData` with the default allowed classes decodes every value of every attribute.
    public var decodesSecurely: Bool { incomplete == nil && attributes.allSatisfy(\.decodesSecurely) }

    /// The report as text lines, indented to sit in a store report.
    public var lines: [String] {
        var lines = ["  transformable values (checked against NSSecureUnarchiveFromData, Foundation's default classes):"]
        for audit in attributes {
            let transformer =
                audit.transformer == nil
                ? "none (Binary: the app archives its values itself)"
                : audit.valueTransformerName ?? "default (\(audit.transformer ?? ""))"
            lines.append("    \(audit.entity).\(audit.attribute)  transformer: \(transformer)")
            var counts = ["\(audit.nilValues) nil", "\(audit.archives) archive\(audit.archives == 1 ? "" : "s")"]
            if audit.notArchives > 0 { counts.append("\(audit.notArchives) not archives") }
            if audit.unreadable > 0 { counts.append("\(audit.unreadable) unreadable") }
            lines.append("      \(audit.values) value\(audit.values == 1 ? "" : "s"): " + counts.joined(separator: ", "))
            if !audit.classes.isEmpty {
                let classes = audit.classes.map { "\($0.name) ×\($0.objects)" }.joined(separator: ", ")
                lines.append("      classes: \(classes)")
            }
            if audit.decodesSecurely {
                lines.append("      NSSecureUnarchiveFromData: decodes every value")
                continue
            }
            if audit.archives + audit.unreadable == 0, let transformer = audit.transformer {
                lines.append(
                    "      no value is a keyed archive: \(transformer) writes bytes of its own ("
                        + Self.named(audit.notArchiveObjects, of: audit.notArchives) + ")")
                lines.append("      NSSecureUnarchiveFromData: would decode none of them")
                continue
            }
            let failing = audit.failingValues + audit.unreadable + (audit.transformer == nil ? 0 : audit.notArchives)
            lines.append(
                "      NSSecureUnarchiveFromData: would fail on \(failing) value\(failing == 1 ? "" : "s") of \(audit.values)")
            for refused in audit.failingClasses {
                lines.append(
                    "        \(refused.name) not allowed: \(refused.values) value\(refused.values == 1 ? "" : "s") ("
                        + Self.named(refused.objects, of: refused.values) + ")")
            }
            if audit.notArchives > 0, audit.transformer != nil {
                lines.append(
                    "        not a keyed archive: \(audit.notArchives) value\(audit.notArchives == 1 ? "" : "s") ("
                        + Self.named(audit.notArchiveObjects, of: audit.notArchives) + ")")
            }
            if audit.unreadable > 0 {
                lines.append(
                    "        unreadable: \(audit.unreadable) value\(audit.unreadable == 1 ? "" : "s") ("
                        + Self.named(audit.unreadableObjects, of: audit.unreadable) + ")")
            }
        }
        if let incomplete { lines.append("    incomplete: \(incomplete)") }
        return lines
    }

    /// `Book/p1, Book/p2, …` for the first objects of `count`.
    private static func named(_ objects: [String], of count: Int) -> String {
        objects.joined(separator: ", ") + (count > objects.count ? ", …" : "")
    }
}

/// Builds a ``TransformableReport`` from record batches as a reader yields them, keeping counts and the first few
/// object names only: memory stays the same however many objects the store holds.
///
/// ```swift
/// var audit = TransformableAudit(model: reader.model, path: "Notes.sqlite")
/// audit.read(from: &reader)
/// print(audit.report.lines.joined(separator: "\n"))
/// ```
///
/// Each value gets the archive reader's rules (``KeyedArchive/classCensus(maximumDepth:)``): a value larger than
/// ``maximumValueSize``, damaged, nested deeper than 64 levels or holding a reference cycle is counted as unreadable
/// with a warning naming the entity, object and attribute; the audit goes on with the next value.
public struct TransformableAudit: Sendable {
    /// Objects named per failing class, for values that are no archive and for unreadable values.
    public static let namedObjectLimit = 5
    /// Class names listed per attribute; a hostile store naming more has the rest counted only.
    public static let classLimit = 256
    /// Warnings kept; the rest are counted.
    public static let warningLimit = 100
    /// The largest value read (64 MiB); a larger one is unreadable.
    public static let maximumValueSize = 64 << 20

    /// The per-attribute tallies, in model order.
    private var audits: [TransformableReport.AttributeAudit] = []
    /// Per attribute: objects and values per class name.
    private var classTallies: [[String: (objects: Int, values: Int, allowed: Bool)]] = []
    /// Per attribute: values and first objects per failing class name.
    private var failingTallies: [[String: (values: Int, objects: [String])]] = []
    /// Per concrete entity: (layout position, audit index) of each Transformable attribute.
    private var columns: [String: [(position: Int, audit: Int)]] = [:]
    private let model: ObjectModel
    private let path: String
    private var warnings: [Diagnostic] = []
    private var omittedWarnings = 0
    private var incomplete: String?

    /// The concrete and abstract entities whose objects hold a Transformable attribute (declared or inherited).
    public let entityNames: Set<String>

    /// An audit of `model`'s persistent Transformable attributes, for the store at `path` (as warnings name it).
    public init(model: ObjectModel, path: String) {
        self.model = model
        self.path = path
        var index: [String: Int] = [:]
        for entity in model.entities {
            for attribute in entity.attributes where Self.isAudited(attribute) {
                index["\(entity.name)\u{0}\(attribute.name)"] = audits.count
                audits.append(TransformableReport.AttributeAudit(entity: entity.name, attribute: attribute))
            }
        }
        classTallies = Array(repeating: [:], count: audits.count)
        failingTallies = Array(repeating: [:], count: audits.count)
        var names: Set<String> = []
        for entity in model.entities {
            guard let layout = RecordLayout(entity: entity.name, in: model) else { continue }
            let declaring = [entity] + model.ancestors(of: entity)
            var found: [(Int, Int)] = []
            for (position, attribute) in layout.attributes.enumerated() where Self.isAudited(attribute) {
                guard let owner = declaring.first(where: { $0.attributes.contains { $0.name == attribute.name } }),
                    let audit = index["\(owner.name)\u{0}\(attribute.name)"]
                else { continue }
                found.append((position, audit))
            }
            if !found.isEmpty {
                columns[entity.name] = found
                names.insert(entity.name)
            }
        }
        self.entityNames = names
    }

    /// Whether the model has no persistent Transformable attribute (nor Binary attribute, which may hold archives).
    public var isEmpty: Bool { audits.isEmpty }

    /// Transformable attributes, and Binary ones (which may hold archives an app made itself).
    private static func isAudited(_ attribute: Attribute) -> Bool {
        (attribute.type == .transformable || attribute.type == .binary) && !attribute.isTransient
    }

    /// Examines the Transformable values of every record in `batch`.
    public mutating func add(_ batch: RecordBatch) {
        guard let found = columns[batch.layout.entityName] else { return }
        for row in 0..<batch.count {
            let object = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row)).description
            for (position, audit) in found {
                let cell = batch.cell(row: row, column: position)
                switch cell.kind {
                case .null:
                    audits[audit].values += 1
                    audits[audit].nilValues += 1
                case .blob, .text:
                    let data = batch.withBytes(of: cell) { Data($0) }
                    examine(data, object: object, entity: batch.layout.entityName, audit: audit)
                case .externalDataReference where audits[audit].transformer == nil:
                    audits[audit].values += 1
                    audits[audit].notArchives += 1
                case .externalDataReference:
                    audits[audit].values += 1
                    refuse(
                        "its externally stored file is missing", object: object, entity: batch.layout.entityName,
                        audit: audit)
                default:
                    audits[audit].values += 1
                    refuse("it is not stored as bytes", object: object, entity: batch.layout.entityName, audit: audit)
                }
            }
        }
    }

    /// Examines one value of attribute `audit` held by `object`.
    private mutating func examine(_ data: Data, object: String, entity: String, audit: Int) {
        audits[audit].values += 1
        guard data.count <= Self.maximumValueSize else {
            refuse(
                "\(data.count) bytes, more than the \(Self.maximumValueSize)-byte limit", object: object,
                entity: entity, audit: audit)
            return
        }
        guard KeyedArchive.looksLikeKeyedArchive(data) else {
            audits[audit].notArchives += 1
            if audits[audit].notArchiveObjects.count < Self.namedObjectLimit {
                audits[audit].notArchiveObjects.append(object)
            }
            return
        }
        let census: ArchiveClassCensus
        do {
            census = try KeyedArchive(data: data).classCensus()
        } catch let error as DecantError {
            let place = error.location?.object.map { " (at \($0))" } ?? ""
            refuse(error.message + place, object: object, entity: entity, audit: audit)
            return
        } catch {
            refuse("\(error)", object: object, entity: entity, audit: audit)
            return
        }
        audits[audit].archives += 1
        var fails = false
        for (name, count) in census.counts.sorted(by: { $0.key < $1.key }) {
            let allowed = Self.isSecurelyDecodable(census.chains[name] ?? [name])
            if let tally = classTallies[audit][name] {
                classTallies[audit][name] = (tally.objects + count, tally.values + 1, allowed)
            } else if classTallies[audit].count < Self.classLimit {
                classTallies[audit][name] = (count, 1, allowed)
            } else {
                audits[audit].unlistedClassObjects += count
            }
            guard !allowed else { continue }
            fails = true
            if let tally = failingTallies[audit][name] {
                let objects = tally.objects.count < Self.namedObjectLimit ? tally.objects + [object] : tally.objects
                failingTallies[audit][name] = (tally.values + 1, objects)
            } else if failingTallies[audit].count < Self.classLimit {
                failingTallies[audit][name] = (1, [object])
            }
        }
        if fails { audits[audit].failingValues += 1 }
    }

    /// Records that reading stopped early (the reader's error): the report says so.
    public mutating func stop(because reason: String) {
        incomplete = reason
    }

    /// Whether a class whose `$classes` chain is `chain` is among (or a subclass of one of) the default classes.
    public static func isSecurelyDecodable(_ chain: [String]) -> Bool {
        chain.contains { TransformableReport.secureAllowedClasses.contains($0) }
    }

    /// Counts an unreadable value with its warning.
    private mutating func refuse(_ reason: String, object: String, entity: String, audit: Int) {
        audits[audit].unreadable += 1
        if audits[audit].unreadableObjects.count < Self.namedObjectLimit {
            audits[audit].unreadableObjects.append(object)
        }
        guard warnings.count < Self.warningLimit else {
            omittedWarnings += 1
            return
        }
        warnings.append(
            Diagnostic(
                .unreadableTransformable,
                "\(audits[audit].transformer == nil ? "archived" : "transformable") value not read: \(reason)",
                at: Location(path: path, entity: entity, object: object, keyPath: audits[audit].attribute)))
    }

    /// The report of what was examined so far.
    public var report: TransformableReport {
        var attributes = audits
        for index in attributes.indices {
            attributes[index].classes = classTallies[index].map {
                TransformableReport.ClassCount(
                    name: $0.key, objects: $0.value.objects, values: $0.value.values, isSecurelyDecodable: $0.value.allowed)
            }.sorted { ($0.objects, $1.name) > ($1.objects, $0.name) }
            attributes[index].failingClasses = failingTallies[index].map {
                TransformableReport.FailingClass(name: $0.key, values: $0.value.values, objects: $0.value.objects)
            }.sorted { ($0.values, $1.name) > ($1.values, $0.name) }
        }
        attributes.removeAll { $0.transformer == nil && $0.archives + $0.unreadable == 0 }
        return TransformableReport(
            attributes: attributes, warnings: warnings, omittedWarnings: omittedWarnings, incomplete: incomplete)
    }
}

extension TransformableAudit {
    /// Audits every object `reader` yields (a reader that takes a selection was told to take ``entityNames`` only).
    /// An error of the reader ends the audit early: the report says why (``TransformableReport/incomplete``) and
    /// keeps what was counted.
    public mutating func read(from reader: inout some RecordReader) {
        guard let first = entityNames.sorted().first, let layout = RecordLayout(entity: first, in: model) else {
            return
        }
        var batch = RecordBatch(layout: layout)
        do {
            while try reader.nextBatch(into: &batch) { add(batch) }
        } catch let error as DecantError {
            stop(because: error.description)
        } catch {
            stop(because: "\(error)")
        }
    }
}

extension Diagnostic.Kind {
    /// A Transformable attribute's value (or a Binary attribute's archive) that looks like a keyed archive but that the
    /// archive reader refuses (damaged bytes, nesting too deep, a reference cycle, too large): counted as unreadable by
    /// ``TransformableAudit``, which goes on with the next value.
    public static let unreadableTransformable = Diagnostic.Kind(rawValue: "unreadable-transformable")
}
