import DecantCore
import DecantCodecs
import Foundation

/// Why a JSON value cannot be an attribute's value: what was expected (the caller adds where).
struct ValueMismatch: Error {
    var expected: String
}

/// Reads attribute values from JSON: strictly the forms ``JSONRecordWriter`` writes (`document`), or the looser
/// forms exported JSON has (`plain`: numbers and numeric strings, ISO 8601 dates with any offset or epoch numbers).
struct AttributeDecoder {
    enum Mode {
        /// Decant's own document: exact forms only; date numbers count from 2001-01-01.
        case document
        /// Plain JSON: date numbers count from `epoch`; integers are range-checked for their type.
        case plain(epoch: JSONOptions.DateEpoch)
    }

    let mode: Mode

    private var isPlain: Bool {
        if case .plain = mode { return true }
        return false
    }

    /// The cell `value` gives `attribute`.
    func cell(for value: JSONValue, attribute: Attribute) throws(ValueMismatch) -> CellValue {
        try cell(for: value, type: attribute.type)
    }

    /// The cell `value` gives `attribute` of `layout`: a composite's from an object of its elements (see
    /// ``compositeCell(for:attribute:composite:)``), any other's by its type.
    func cell(for value: JSONValue, attribute: Attribute, in layout: RecordLayout) throws(ValueMismatch) -> CellValue {
        guard attribute.type == .composite else { return try cell(for: value, type: attribute.type) }
        return try compositeCell(for: value, attribute: attribute, composite: layout.composites[attribute.name])
    }

    /// A composite's value: null, or an object whose keys are element names (each at most once; an element left
    /// out has no value), each read as its element's type; kept as ``CompositeValueCoding`` bytes.
    func compositeCell(for value: JSONValue, attribute: Attribute, composite: CompositeType?) throws(ValueMismatch)
        -> CellValue
    {
        if case .null = value { return .null }
        guard let composite else {
            throw ValueMismatch(expected: "a value of composite type \(attribute.compositeName ?? "(none)"), which the model lacks")
        }
        let names = composite.attributes.map(\.name)
        guard let members = value.members else {
            throw ValueMismatch(
                expected: "an object of its elements (\(names.joined(separator: ", "))), found \(value.kindDescription)")
        }
        var elements: [String: Value] = [:]
        for member in members {
            guard let element = composite.attributes.first(where: { $0.name == member.key }) else {
                throw ValueMismatch(expected: "only its elements (\(names.joined(separator: ", "))), found the key \(member.key)")
            }
            guard elements[member.key] == nil else { throw ValueMismatch(expected: "the element \(member.key) once, found it twice") }
            let cell: CellValue
            do { cell = try self.cell(for: member.node.value, type: element.type) } catch {
                throw ValueMismatch(expected: "for its element \(element.name) \(error.expected)")
            }
            elements[member.key] = Self.value(of: cell, type: element.type)
        }
        return .blob(Data(CompositeValueCoding.encode(elements)))
    }

    /// A cell read for an element of `type`, as a ``Value``.
    static func value(of cell: CellValue, type: AttributeType) -> Value {
        switch cell {
        case .null: return .null
        case .integer(let integer):
            switch type {
            case .boolean: return .bool(integer != 0)
            case .double, .float: return .double(Double(integer))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(integer)))
            case .decimal: return .decimal(Decimal(integer))
            default: return .integer(integer)
            }
        case .real(let real):
            switch type {
            case .date: return .date(Date(timeIntervalSinceReferenceDate: real))
            case .decimal: return real.isFinite ? .decimal(Decimal(real)) : .double(real)
            default: return .double(real)
            }
        case .text(let text):
            switch type {
            case .uri: return .uri(text)
            case .decimal: return Decimal(string: text).map(Value.decimal) ?? .string(text)
            default: return .string(text)
            }
        case .blob(let data):
            switch type {
            case .uuid where data.count == 16: return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            case .transformable: return .transformable(data)
            default: return .data(data)
            }
        case .externalData(let name): return .externalDataReference(name)
        case .modelDefault(let value, _): return value
        }
    }

    /// The cell `value` gives an attribute of `type`.
    func cell(for value: JSONValue, type: AttributeType) throws(ValueMismatch) -> CellValue {
        if case .null = value { return .null }
        let found = value.kindDescription
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(try integer(value, type, found: found))
        case .boolean:
            switch value {
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .number("0") where isPlain: return .integer(0)
            case .number("1") where isPlain: return .integer(1)
            case .string("true") where isPlain: return .integer(1)
            case .string("false") where isPlain: return .integer(0)
            default: throw ValueMismatch(expected: "true or false, found \(found)")
            }
        case .double, .float:
            if let real = real(value) { return .real(real) }
            throw ValueMismatch(expected: "a number (or \"NaN\", \"Infinity\", \"-Infinity\"), found \(found)")
        case .decimal:
            switch value {
            case .string(let text) where JSONNumberSyntax.isValidDecimal(text): return .decimal(text)
            case .number(let text): return .decimal(text)
            default:
                throw ValueMismatch(expected: "a decimal number as a string, like \"10.25\" (or \"NaN\"), found \(found)")
            }
        case .date:
            return .real(try date(value, found: found))
        case .string, .uri:
            guard let text = value.stringValue else { throw ValueMismatch(expected: "a string, found \(found)") }
            return .text(text)
        case .uuid:
            guard let text = value.stringValue, let uuid = UUID(uuidString: text) else {
                throw ValueMismatch(expected: "a UUID like \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", found \(found)")
            }
            return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .binary, .transformable:
            if let text = value.stringValue, let data = Data(base64Encoded: text) { return .blob(data) }
            // A value `convert --decode-transformables` wrote: archived again as NSKeyedArchiver lays it out.
            if type == .transformable, let archived = try ArchivedJSON.value(of: value) {
                do { return .blob(try archived.archivedData()) } catch {
                    throw ValueMismatch(expected: "a value Decant can archive (\(error))")
                }
            }
            if case .document = mode, let members = value.members, members.count == 1,
                members[0].key == "externalDataReference", let name = members[0].node.value.stringValue
            {
                return .externalData(name)
            }
            throw ValueMismatch(
                expected: (type == .transformable ? "base64 data or {\"archived\": value}" : "base64 data")
                    + ", found \(value.stringValue == nil ? found : "a string that is not base64")")
        default:
            throw ValueMismatch(expected: "null: \(type.modelName) attributes are not stored, found \(found)")
        }
    }

    private func integer(_ value: JSONValue, _ type: AttributeType, found: String) throws(ValueMismatch) -> Int64 {
        let name = type.modelName
        var result: Int64?
        switch value {
        case .number(let text):
            if JSONNumberSyntax.isInteger(text) {
                result = Int64(text)
            } else if isPlain, let real = Double(text), real.rounded() == real, real.magnitude < 9.2e18 {
                result = Int64(real)
            }
        case .string(let text) where isPlain && JSONNumberSyntax.isInteger(text):
            result = Int64(text)
        default:
            break
        }
        guard let result else { throw ValueMismatch(expected: "a whole number (\(name)), found \(found)") }
        if isPlain {
            let range: ClosedRange<Int64> =
                switch type {
                case .integer16: Int64(Int16.min)...Int64(Int16.max)
                case .integer32: Int64(Int32.min)...Int64(Int32.max)
                default: Int64.min...Int64.max
                }
            guard range.contains(result) else {
                throw ValueMismatch(
                    expected:
                        "a whole number that fits \(name) (\(range.lowerBound)...\(range.upperBound)), found \(result)")
            }
        }
        return result
    }

    private func real(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let text): return Double(text)
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let text) where isPlain && JSONNumberSyntax.isValid(text): return Double(text)
        default: return nil
        }
    }

    private func date(_ value: JSONValue, found: String) throws(ValueMismatch) -> Double {
        let numbers: String
        switch mode {
        case .document: numbers = "a number of seconds since 2001-01-01"
        case .plain(.unix): numbers = "a number of seconds since 1970-01-01 (--date-epoch unix)"
        case .plain(.reference): numbers = "a number of seconds since 2001-01-01 (--date-epoch reference)"
        }
        let expected =
            "an ISO 8601 date like \"2024-05-19T18:14:06.84Z\" or \"2024-05-19T20:14:06+02:00\", or \(numbers)"
        switch value {
        case .string(let text):
            if case .document = mode {
                switch text {
                case "NaN": return .nan
                case "Infinity": return .infinity
                case "-Infinity": return -.infinity
                default: break
                }
            }
            switch ExactDate.referenceSeconds(iso: text) {
            case .success(let seconds): return seconds
            case .failure(.outOfRange):
                throw ValueMismatch(expected: "\(expected); found a date out of range: \"\(text)\"")
            case .failure(.syntax): throw ValueMismatch(expected: "\(expected); found \"\(text)\"")
            }
        case .number(let text):
            switch mode {
            case .document, .plain(.reference):
                if let seconds = Double(text) { return seconds }
            case .plain(.unix):
                if let seconds = Self.unixToReference(text) { return seconds }
            }
            throw ValueMismatch(expected: expected + ", found \(text)")
        default:
            throw ValueMismatch(expected: "\(expected), found \(found)")
        }
    }

    /// Seconds since 1970 (as JSON number text) to seconds since 2001, subtracted exactly in decimal and rounded
    /// once.
    static func unixToReference(_ text: String) -> Double? {
        let offset = Decimal(ExactDate.referenceOffset)
        if let decimal = Decimal(string: text), decimal.isFinite, let seconds = Double((decimal - offset).description) {
            return seconds
        }
        return Double(text).map { $0 - Double(ExactDate.referenceOffset) }
    }
}
