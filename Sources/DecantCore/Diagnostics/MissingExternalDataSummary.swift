extension [Diagnostic] {
    /// How many file names ``collapsingMissingExternalData()`` names.
    public static var missingExternalDataNamesShown: Int { 5 }

    /// These diagnostics with every ``Diagnostic/Kind/missingExternalData`` one (one per object whose external-data
    /// file is missing) folded into one warning, in the place of the first: the count and the first few file names.
    /// A migration, a seeding or a validation carries such references as they are, as Core Data does, and says so
    /// once.
    ///
    /// ```swift
    /// printWarnings(report.warnings.collapsingMissingExternalData())
    /// // warning: Notes.sqlite: 3 externally stored values have no file in .Notes_SUPPORT/_EXTERNAL_DATA (A1, B2,
    /// // C3); their references are carried as they are
    /// ```
    public func collapsingMissingExternalData() -> [Diagnostic] {
        let missing = filter { $0.kind == .missingExternalData }
        guard missing.count > 1 || missing.first?.message.hasSuffix("; kept as a reference") == true,
            let first = missing.first,
            let index = firstIndex(of: first)
        else { return self }
        var names: [String] = []
        var seen: Set<String> = []
        for diagnostic in missing {
            let name = diagnostic.file.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "?"
            if seen.insert(name).inserted, names.count < Self.missingExternalDataNamesShown { names.append(name) }
        }
        let folder = first.file.map { path -> String in
            var parts = path.split(separator: "/", omittingEmptySubsequences: false)
            if !parts.isEmpty { parts.removeLast() }
            return parts.suffix(2).joined(separator: "/")
        } ?? "_EXTERNAL_DATA"
        let more = seen.count > names.count ? ", …" : ""
        let kept = missing.allSatisfy { $0.message.hasSuffix("; kept as a reference") }
        var location = first.location
        location?.object = nil
        location?.keyPath = nil
        let summary = Diagnostic(
            .missingExternalData,
            "\(missing.count) externally stored value\(missing.count == 1 ? " has" : "s have") no file in \(folder) "
                + "(\(names.joined(separator: ", "))\(more)); "
                + (kept ? "their references are carried as they are" : "read as nil"),
            at: location, file: first.file)
        var result = self.filter { $0.kind != .missingExternalData }
        result.insert(summary, at: Swift.min(index, result.count))
        return result
    }
}
