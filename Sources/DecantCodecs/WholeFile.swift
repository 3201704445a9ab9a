import DecantCore
package import Foundation

extension Data {
    /// The whole file at `url`, for formats that read a file at once; `what` names it in the error.
    ///
    /// ```swift
    /// let data = try Data(wholeFile: url, what: "the XML store")
    /// ```
    /// - Throws: `.fileNotFound` when there is no such file, `.ioError` when it cannot be read.
    package init(wholeFile url: URL, what: String) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw DecantError(
                exists ? .ioError : .fileNotFound, exists ? "cannot read \(what)" : "no such file",
                at: Location(path: url.displayPath))
        }
        self = data
    }
}
