import DecantCore
import DecantCodecs
import Foundation

/// `_decant.json`, the small file Decant writes into a CSV folder: the model version the files follow (its name and
/// entity version hashes, so reading the folder back resolves the same version of a bundle) and the dialect they
/// were written in.
///
/// ```json
/// {"format": "decant-csv", "formatVersion": 1, "modelVersion": "Notes 3",
///  "entityVersionHashes": {"Note": "UanhXbtT…"}, "delimiter": ",", "nullMarker": null}
/// ```
struct CSVFolderMetadata: Codable, Hashable {
    /// The file's name inside the folder.
    static let fileName = "_decant.json"
    static let formatName = "decant-csv"
    static let currentFormatVersion = 1

    var format = formatName
    var formatVersion = currentFormatVersion
    /// The model version's name, when it has one.
    var modelVersion: String?
    /// Per entity, its version hash in base64.
    var entityVersionHashes: [String: String]
    var delimiter: String
    var nullMarker: String?

    init(model: ObjectModel, dialect: CSVDialect) {
        modelVersion = model.versionName
        entityVersionHashes = model.entityVersionHashes.mapValues { $0.base64EncodedString() }
        delimiter = dialect.delimiterText
        nullMarker = dialect.nullMarker
    }

    /// The hashes as bytes.
    /// - Throws: `.malformedInput` for a hash that is not base64.
    func hashes(at location: Location) throws -> [String: Data] {
        try entityVersionHashes.mapValues { text in
            guard let data = Data(base64Encoded: text) else {
                throw DecantError(
                    .malformedInput, "the version hash \(text.debugDescription) is not base64", at: location)
            }
            return data
        }
    }

    /// The dialect the folder was written in.
    /// - Throws: `.malformedInput` when it is not a valid dialect.
    func dialect(at location: Location) throws -> CSVDialect {
        guard delimiter.count == 1, let character = delimiter.first else {
            throw DecantError(
                .malformedInput, "the delimiter must be one character, not \(delimiter.debugDescription)", at: location)
        }
        do {
            return try CSVDialect(delimiter: character, nullMarker: nullMarker)
        } catch let error as DecantError {
            throw DecantError(.malformedInput, error.message, at: location)
        }
    }

    /// Reads the metadata file of `folder`, if there is one.
    /// - Throws: `.malformedInput` when it is not this format's metadata, `.unsupportedFormat` for a newer version.
    static func read(in folder: URL, displayPath: String) throws -> CSVFolderMetadata? {
        let url = folder.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let location = Location(path: displayPath)
        let metadata: CSVFolderMetadata
        do {
            metadata = try JSONDecoder().decode(CSVFolderMetadata.self, from: Data(contentsOf: url))
        } catch {
            throw DecantError(
                .malformedInput, "not the metadata of a CSV folder written by Decant: \(error)", at: location,
                underlyingError: error)
        }
        guard metadata.format == formatName else {
            throw DecantError(
                .malformedInput, "format is \(metadata.format.debugDescription), expected \"\(formatName)\"",
                at: location)
        }
        guard metadata.formatVersion <= currentFormatVersion else {
            throw DecantError(
                .unsupportedFormat,
                "written by a newer Decant (format version \(metadata.formatVersion); this one reads up to "
                    + "\(currentFormatVersion))", at: location)
        }
        return metadata
    }

    /// The file's bytes.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    private enum CodingKeys: String, CodingKey {
        case format, formatVersion, modelVersion, entityVersionHashes, delimiter, nullMarker
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        modelVersion = try container.decodeIfPresent(String.self, forKey: .modelVersion)
        entityVersionHashes = try container.decodeIfPresent([String: String].self, forKey: .entityVersionHashes) ?? [:]
        delimiter = try container.decodeIfPresent(String.self, forKey: .delimiter) ?? ","
        nullMarker = try container.decodeIfPresent(String.self, forKey: .nullMarker)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(modelVersion, forKey: .modelVersion)
        try container.encode(entityVersionHashes, forKey: .entityVersionHashes)
        try container.encode(delimiter, forKey: .delimiter)
        try container.encode(nullMarker, forKey: .nullMarker)
    }
}
