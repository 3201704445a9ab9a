import DecantCore
import DecantCodecs
import Foundation

/// The JSON spelling of a Transformable value decoded from its keyed archive (`convert --decode-transformables`),
/// `{"archived": V}`, and its reading back. Every ``FoundationValue`` has exactly one spelling V, so a value read back
/// is the value written:
///
/// | Foundation | V |
/// |---|---|
/// | NSString | a string |
/// | NSNumber: integer, Boolean, floating point | a number without fraction or exponent, `true`/`false`, a number with one (`2.0`, `1e+20`); NaN and infinities `{"$real": "NaN"}` |
/// | NSNull | `null` |
/// | NSArray | an array |
/// | NSDictionary (string keys) | an object; a key that starts with `$` gets another `$` in front (`$$`) |
/// | NSDate | `{"$date": "2024-05-19T18:14:06.84Z"}` (as the document's dates: a number of seconds since 2001 when ISO 8601 cannot hold it) |
/// | NSData | `{"$data": base64}` |
/// | NSURL | `{"$url": string}` |
/// | NSUUID | `{"$uuid": "E621E1F8-…"}` |
/// | NSSet | `{"$set": [...]}` |
///
/// A mutable class adds `"$class"` first: `{"$class": "NSMutableDictionary", "key": …}`,
/// `{"$class": "NSMutableArray", "$array": [...]}`, `{"$class": "NSMutableSet", "$set": [...]}`,
/// `{"$class": "NSMutableString", "$string": "…"}`, `{"$class": "NSMutableData", "$data": "…"}`.
enum ArchivedJSON {
    /// The key of the wrapper object.
    static let wrapperKey = "archived"

    // MARK: Writing

    /// Appends `{"archived": V}`.
    static func append(_ value: FoundationValue, to output: inout JSONOutput) {
        output.append("{\"archived\":")
        appendValue(value, to: &output)
        output.append("}")
    }

    private static func appendValue(_ value: FoundationValue, to output: inout JSONOutput) {
        switch value {
        case .null:
            output.append("null")
        case .bool(let flag):
            output.append(flag ? "true" : "false")
        case .integer(let integer):
            output.appendInteger(integer)
        case .real(let real):
            if real.isFinite {
                // Swift spells every finite Double with a fraction or an exponent (`2.0`, `1e+20`): never an integer.
                output.appendRaw(real.description)
            } else {
                output.append("{\"$real\":")
                output.appendDouble(real)
                output.append("}")
            }
        case .string(let text, let isMutable):
            guard isMutable else { return output.appendString(text) }
            output.append("{\"$class\":\"NSMutableString\",\"$string\":")
            output.appendString(text)
            output.append("}")
        case .data(let bytes, let isMutable):
            output.append(isMutable ? "{\"$class\":\"NSMutableData\",\"$data\":\"" : "{\"$data\":\"")
            output.appendRaw(bytes.base64EncodedString())
            output.append("\"}")
        case .date(let seconds):
            output.append("{\"$date\":")
            JSONRecordWriter.appendDate(seconds, to: &output)
            output.append("}")
        case .url(let text):
            output.append("{\"$url\":")
            output.appendString(text)
            output.append("}")
        case .uuid(let uuid):
            output.append("{\"$uuid\":")
            output.appendString(uuid.uuidString)
            output.append("}")
        case .collection(let elements, let kind):
            switch kind {
            case .array: break
            case .mutableArray: output.append("{\"$class\":\"NSMutableArray\",\"$array\":")
            case .set: output.append("{\"$set\":")
            case .mutableSet: output.append("{\"$class\":\"NSMutableSet\",\"$set\":")
            }
            output.append("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(",") }
                appendValue(element, to: &output)
            }
            output.append("]")
            if kind != .array { output.append("}") }
        case .dictionary(let entries, let isMutable):
            output.append("{")
            if isMutable { output.append("\"$class\":\"NSMutableDictionary\"") }
            for (index, entry) in entries.enumerated() {
                if index > 0 || isMutable { output.append(",") }
                output.appendString(entry.key.hasPrefix("$") ? "$" + entry.key : entry.key)
                output.append(":")
                appendValue(entry.value, to: &output)
            }
            output.append("}")
        }
    }

    // MARK: Reading

    /// The value of `{"archived": V}`, or nil when `value` is not an object of that one key.
    static func value(of value: JSONValue) throws(ValueMismatch) -> FoundationValue? {
        guard let members = value.members, members.count == 1, members[0].key == wrapperKey else { return nil }
        return try self.value(members[0].node.value, path: wrapperKey, depth: 0)
    }

    private static let tags: Set<String> = ["$date", "$data", "$string", "$url", "$uuid", "$real", "$array", "$set"]

    private static func value(_ json: JSONValue, path: String, depth: Int) throws(ValueMismatch) -> FoundationValue {
        guard depth <= FoundationValue.maximumDepth else {
            throw ValueMismatch(expected: "values nested at most \(FoundationValue.maximumDepth) deep, at \(path)")
        }
        switch json {
        case .null:
            return .null
        case .bool(let flag):
            return .bool(flag)
        case .number(let text):
            if JSONNumberSyntax.isInteger(text) {
                guard let integer = Int64(text) else {
                    throw ValueMismatch(expected: "an integer that fits 64 bits at \(path), found \(text)")
                }
                return .integer(integer)
            }
            guard let real = Double(text) else { throw ValueMismatch(expected: "a number at \(path), found \(text)") }
            return .real(real)
        case .string(let text):
            return .string(text)
        case .array(let nodes):
            return .collection(try elements(nodes, path: path, depth: depth), .array)
        case .object(let members):
            return try object(members, path: path, depth: depth)
        }
    }

    private static func elements(_ nodes: [JSONNode], path: String, depth: Int) throws(ValueMismatch)
        -> [FoundationValue]
    {
        var values: [FoundationValue] = []
        values.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            values.append(try value(node.value, path: "\(path)[\(index)]", depth: depth + 1))
        }
        return values
    }

    private static func object(_ members: [JSONMember], path: String, depth: Int) throws(ValueMismatch)
        -> FoundationValue
    {
        var className: String?
        var tag: JSONMember?
        var entries: [FoundationValue.Entry] = []
        var keys: Set<String> = []
        for member in members {
            if member.key == "$class" {
                guard className == nil, let name = member.node.value.stringValue else {
                    throw ValueMismatch(expected: "one \"$class\" naming a class at \(path)")
                }
                className = name
            } else if tags.contains(member.key) {
                guard tag == nil else {
                    throw ValueMismatch(expected: "one tag at \(path), found \(tag?.key ?? "") and \(member.key)")
                }
                tag = member
            } else if member.key.hasPrefix("$"), !member.key.hasPrefix("$$") {
                throw ValueMismatch(
                    expected: "at \(path) a dictionary key starting with $ written $$, or one of the tags "
                        + tags.sorted().joined(separator: ", ") + ", found \(member.key)")
            } else {
                let key = member.key.hasPrefix("$") ? String(member.key.dropFirst()) : member.key
                guard keys.insert(key).inserted else {
                    throw ValueMismatch(expected: "each dictionary key once at \(path), found \(member.key) twice")
                }
                let element = try value(member.node.value, path: "\(path).\(key)", depth: depth + 1)
                entries.append(FoundationValue.Entry(key, element))
            }
        }
        guard let tag else {
            switch className {
            case nil, "NSDictionary": return .dictionary(entries, isMutable: false)
            case "NSMutableDictionary": return .dictionary(entries, isMutable: true)
            default: throw classMismatch(className, allowed: ["NSDictionary", "NSMutableDictionary"], path: path)
            }
        }
        guard entries.isEmpty else {
            throw ValueMismatch(expected: "\(tag.key) alone (with \"$class\" at most) at \(path), found other keys")
        }
        let node = tag.node.value
        let found = node.kindDescription
        switch tag.key {
        case "$string":
            guard let text = node.stringValue else {
                throw ValueMismatch(expected: "a string in $string at \(path), found \(found)")
            }
            let mutable = try isMutable(className, "NSString", "NSMutableString", path: path)
            return .string(text, isMutable: mutable)
        case "$data":
            guard let text = node.stringValue, let bytes = Data(base64Encoded: text) else {
                throw ValueMismatch(expected: "base64 in $data at \(path), found \(found)")
            }
            let mutable = try isMutable(className, "NSData", "NSMutableData", path: path)
            return .data(bytes, isMutable: mutable)
        case "$array":
            guard case .array(let nodes) = node else {
                throw ValueMismatch(expected: "an array in $array at \(path), found \(found)")
            }
            let mutable = try isMutable(className, "NSArray", "NSMutableArray", path: path)
            return .collection(try elements(nodes, path: path, depth: depth), mutable ? .mutableArray : .array)
        case "$set":
            guard case .array(let nodes) = node else {
                throw ValueMismatch(expected: "an array in $set at \(path), found \(found)")
            }
            let mutable = try isMutable(className, "NSSet", "NSMutableSet", path: path)
            return .collection(try elements(nodes, path: path, depth: depth), mutable ? .mutableSet : .set)
        default:
            break
        }
        if let className { throw classMismatch(className, allowed: [], path: path, tag: tag.key) }
        switch tag.key {
        case "$date":
            return .date(try date(node, path: path))
        case "$url":
            guard let text = node.stringValue else {
                throw ValueMismatch(expected: "a string in $url at \(path), found \(found)")
            }
            return .url(text)
        case "$uuid":
            guard let text = node.stringValue, let uuid = UUID(uuidString: text) else {
                throw ValueMismatch(
                    expected: "a UUID like \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\" in $uuid at \(path)")
            }
            return .uuid(uuid)
        default:  // "$real"
            switch node {
            case .string("NaN"): return .real(.nan)
            case .string("Infinity"): return .real(.infinity)
            case .string("-Infinity"): return .real(-.infinity)
            case .number(let text): if let real = Double(text) { return .real(real) }
            default: break
            }
            throw ValueMismatch(
                expected: "\"NaN\", \"Infinity\", \"-Infinity\" or a number in $real at \(path), found \(found)")
        }
    }

    private static func isMutable(_ className: String?, _ immutable: String, _ mutable: String, path: String)
        throws(ValueMismatch) -> Bool
    {
        switch className {
        case nil, immutable?: return false
        case mutable?: return true
        default: throw classMismatch(className, allowed: [immutable, mutable], path: path)
        }
    }

    private static func classMismatch(_ className: String?, allowed: [String], path: String, tag: String? = nil)
        -> ValueMismatch
    {
        let name = className ?? ""
        if let tag { return ValueMismatch(expected: "no \"$class\" with \(tag) at \(path), found \(name)") }
        return ValueMismatch(expected: "\"$class\" \(allowed.joined(separator: " or ")) at \(path), found \(name)")
    }

    private static func date(_ node: JSONValue, path: String) throws(ValueMismatch) -> Double {
        switch node {
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let text):
            if case .success(let seconds) = ExactDate.referenceSeconds(iso: text) { return seconds }
        case .number(let text):
            if let seconds = Double(text) { return seconds }
        default:
            break
        }
        throw ValueMismatch(
            expected: "an ISO 8601 date or a number of seconds since 2001-01-01 in $date at \(path), found "
                + node.kindDescription)
    }
}
