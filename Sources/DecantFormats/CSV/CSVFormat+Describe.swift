public import DecantCore
import DecantCodecs
public import Foundation

extension CSVFormat: DescribableFormat {
    /// Counts the records of each entity file (join files as links), without a model; names the model version a
    /// folder written by Decant carries.
    public func describe(at url: URL, options: FormatOptions) throws -> FormatDescription {
        let dialect = try CSVDialect(options: options)
        var counts: [String: Int] = [:]
        var notes: [String] = []
        var version: String?
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        var files: [(url: URL, name: String)] = []
        if isDirectory.boolValue {
            let metadata = try CSVFolderMetadata.read(in: url, displayPath: url.displayPath)
            version = metadata?.modelVersion
            let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
                .filter { !$0.hasPrefix(".") && $0.lowercased().hasSuffix(".csv") }.sorted()
            files = names.map { (url.appendingPathComponent($0), String($0.dropLast(4))) }
        } else {
            files = [(url, options.entity ?? url.deletingPathExtension().lastPathComponent)]
        }
        for file in files {
            let tokenizer = try CSVTokenizer(
                url: file.url, path: file.url.displayPath, entity: file.name, delimiter: dialect.delimiter)
            defer { tokenizer.close() }
            var records = 0
            while try tokenizer.nextRecord() { records += 1 }
            let rows = max(records - 1, 0)
            if file.name.contains(".") {
                notes.append("\(file.name): \(rows) link\(rows == 1 ? "" : "s")")
            } else {
                counts[file.name] = rows
            }
        }
        return FormatDescription(format: name, entityCounts: counts, modelVersion: version, notes: notes)
    }
}
