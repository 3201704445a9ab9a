public import Foundation

extension Encodable {
    /// This value as the one JSON document a `--json` command prints: pretty-printed, keys sorted, slashes as-is.
    public func jsonDocument() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
