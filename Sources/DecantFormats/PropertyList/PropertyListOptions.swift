public import DecantCore
import DecantCodecs

/// The settings of plain property-list input: which array of dictionaries becomes the objects (`--key-path`), the
/// entity each array becomes and which keys fill which property (`--plist-mapping`, ``PropertyListMapping``).
///
/// ```swift
/// var options = FormatOptions(bundle: bookmarks)
/// options.propertyList.keyPath = "Library.Bookmarks"
/// options.propertyList.arrayEntities = ["Library.Bookmarks": "Bookmark"]
/// options.propertyList.arrayKeys = ["Library.Bookmarks": ["URLString": "url"]]
/// ```
///
/// A key path names dictionary keys from the top, joined by `.`; an array nested in the dictionaries of an array
/// continues the path of that array (`Library.Bookmarks.Children`). The top-level array's path is the empty string.
public struct PropertyListOptions: FormatSpecificOptions {
    /// The array of dictionaries whose elements become the objects; `nil` for the top-level array, or the one array
    /// of dictionaries the top-level dictionary leads to.
    public var keyPath: String?
    /// Per array key path, the entity its dictionaries become; the empty name leaves the array out.
    public var arrayEntities: [String: String] = [:]
    /// Per array key path, keys renamed to the property they fill; the empty name leaves the key out.
    public var arrayKeys: [String: [String: String]] = [:]

    /// The top-level array (or the only array of dictionaries), each array to the entity the model suggests.
    public init() {}
}

extension FormatOptions {
    /// The settings of plain property-list input.
    public var propertyList: PropertyListOptions {
        get { self[PropertyListOptions.self] }
        set { self[PropertyListOptions.self] = newValue }
    }
}
