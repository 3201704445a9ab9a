public import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite

extension FormatRegistry {
    /// Every format built into Decant, in the order content sniffing tries them.
    ///
    /// ```swift
    /// let format = try FormatRegistry.builtIn.inputFormat(of: url, named: nil)
    /// ```
    public static var builtIn: FormatRegistry {
        FormatRegistry([
            SQLiteFormat(),
            XMLStoreFormat(),
            BinaryStoreFormat(),
            JSONFormat(),
            NDJSONFormat(),
            CSVFormat(),
            PropertyListFormat(),
            ArchiveFormat(),
        ])
    }
}
