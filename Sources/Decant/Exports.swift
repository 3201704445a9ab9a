// `import Decant` gives a Swift program the whole library: the model layer and the record pipeline, the file
// formats, the Core Data SQLite store and SwiftData models from Swift source, as swift-nio's `NIO` re-exports
// `NIOCore`.
@_exported public import DecantCore
@_exported public import DecantCodecs
@_exported public import DecantFormats
@_exported public import DecantSQLite
@_exported public import DecantSwiftData
