import DecantCore
public import Foundation
public import DecantCodecs

extension NSExpressionNode {
    /// Decodes the `NSExpression` a keyed-archive field value refers to (coredata-formats.md 3.2 and 3.4.3);
    /// `nil` for a nil reference.
    ///
    /// ```swift
    /// let archive = try KeyedArchive(data: cdmData, path: "V2toV3.cdm")
    /// let node = try NSExpressionNode.decode(mapping["NSSourceExpression"], in: archive)
    /// print(node?.description ?? "nil")   // FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:…
    /// ```
    ///
    /// Types 0 (constant; a class constant via `NSConstantValueClassName`; no `NSConstantValue` is nil), 1, 2,
    /// 3 and 10 (key path), 4 (function, `valueForKeyPath:` key paths included) and 50 (fetch) are read; any other
    /// type, a missing field or a graph nested deeper than 64 levels throws ``DecantError`` `.malformedInput` naming
    /// the object index.
    public static func decode(_ value: PropertyListValue?, in archive: KeyedArchive) throws -> NSExpressionNode? {
        var decoder = ArchivedExpressionDecoder(archive: archive)
        return try decoder.expression(value, depth: 0)
    }

    /// Decodes the expression at the root of a keyed archive held in `data` (a `.xcmappingmodel`'s
    /// `valueexpressiondata`); `nil` when the root is nil. `path` labels errors.
    public static func decode(archivedData data: Data, path: String?) throws -> NSExpressionNode? {
        let archive = try KeyedArchive(data: data, path: path)
        return try decode(archive.topValue(forKey: "root"), in: archive)
    }
}

/// The recursive walk behind ``NSExpressionNode/decode(_:in:)``, bounded in depth and in objects visited.
private struct ArchivedExpressionDecoder {
    let archive: KeyedArchive
    var visits = 0
    static let maximumDepth = 64
    static let maximumVisits = 100_000

    func fail(_ message: String, _ object: ArchivedObject?, key: String? = nil) -> DecantError {
        let index = object.flatMap { $0.index >= 0 ? "$objects[\($0.index)]" : nil }
        return DecantError(.malformedInput, message, at: Location(path: archive.path, object: index, keyPath: key))
    }

    mutating func expression(_ value: PropertyListValue?, depth: Int) throws -> NSExpressionNode? {
        guard let object = try archive.object(for: value) else { return nil }
        guard depth < Self.maximumDepth else {
            throw fail("expression nests deeper than \(Self.maximumDepth) levels", object)
        }
        visits += 1
        guard visits <= Self.maximumVisits else {
            throw fail("expressions refer to shared objects more than \(Self.maximumVisits) times", object)
        }
        guard object.className != nil else {
            throw fail("expected an NSExpression, found an inline \(object.value.kindName)", object)
        }
        guard let type = try archive.integer(forKey: "NSExpressionType", in: object) else {
            throw fail("\(object.className ?? "object") has no NSExpressionType", object, key: "NSExpressionType")
        }
        switch type {
        case 0:
            if let className = try archive.string(forKey: "NSConstantValueClassName", in: object) {
                return .classConstant(className)
            }
            return .constant(try constant(object, key: "NSConstantValue"))
        case 1:
            return .evaluatedObject
        case 2:
            guard let name = try archive.string(forKey: "NSVariable", in: object) else {
                throw fail("variable expression has no NSVariable", object, key: "NSVariable")
            }
            return .variable(name)
        case 3 where object["NSKeyPath"] != nil, 10:
            guard let path = try archive.string(forKey: "NSKeyPath", in: object) else {
                throw fail("key path expression has no NSKeyPath", object, key: "NSKeyPath")
            }
            return .keyPath(path)
        case 3, 4:
            return try function(object, depth: depth)
        case 50:
            let request = try expression(object["NSFRExpression"], depth: depth + 1) ?? .constant(.null)
            let context = try expression(object["NSMOCExpression"], depth: depth + 1) ?? .constant(.null)
            let countOnly = try archive.bool(forKey: "NSCountOnlyFlag", in: object) ?? false
            return .fetch(request: request, context: context, countOnly: countOnly)
        default:
            throw fail("expression type \(type) is not supported in mapping models", object, key: "NSExpressionType")
        }
    }

    mutating func function(_ object: ArchivedObject, depth: Int) throws -> NSExpressionNode {
        guard let selector = try archive.string(forKey: "NSSelectorName", in: object) else {
            throw fail("function expression has no NSSelectorName", object, key: "NSSelectorName")
        }
        let operand = try expression(object["NSOperand"], depth: depth + 1) ?? .constant(.null)
        var arguments: [NSExpressionNode] = []
        for element in try archive.elements(forKey: "NSArguments", in: object) ?? [] {
            arguments.append(try expression(element, depth: depth + 1) ?? .constant(.null))
        }
        return .function(operand: operand, selector: selector, arguments: arguments)
    }

    /// The constant in field `key`: a plain string, number, Boolean, date or data, or an `NSString`, `NSDate` or
    /// `NSData` object; nil when absent.
    func constant(_ object: ArchivedObject, key: String) throws -> Value {
        guard let constant = try archive.object(forKey: key, in: object) else { return .null }
        guard constant.className != nil else {
            switch constant.value {
            case .string(let text): return .string(text)
            case .integer(let number): return .integer(number)
            case .real(let number): return .double(number)
            case .bool(let flag): return .bool(flag)
            case .date(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .data(let bytes): return .data(bytes)
            default: throw fail("constant is an inline \(constant.value.kindName)", object, key: key)
            }
        }
        if constant.isKind(of: "NSString") || constant.isKind(of: "NSMutableString") {
            return try archive.string(forKey: key, in: object).map(Value.string) ?? .null
        }
        if constant.isKind(of: "NSDate") {
            return try archive.date(forKey: key, in: object).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
                ?? .null
        }
        if constant.isKind(of: "NSData") || constant.isKind(of: "NSMutableData") {
            return try archive.data(forKey: key, in: object).map(Value.data) ?? .null
        }
        throw fail("constant of class \(constant.className ?? "?") is not supported", constant, key: key)
    }
}
