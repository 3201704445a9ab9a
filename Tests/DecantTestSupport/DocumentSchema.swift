public import Foundation

/// Checks Decant's JSON and NDJSON output against `schemas/document.schema.json` with Python's json and jsonschema
/// (an oracle independent of Decant's reader): the JSON document whole, NDJSON line by line.
///
/// ```swift
/// #expect(try DocumentSchema.validate(output, lines: false) == "valid")
/// ```
public enum DocumentSchema {
    /// The schema file.
    public static let url = Fixtures.packageRoot.appendingPathComponent("schemas/document.schema.json")

    /// "valid", or what Python found wrong.
    public static func validate(_ file: URL, lines: Bool) throws -> String {
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[2]))
            text = open(sys.argv[1], encoding='utf-8').read()
            try:
                if sys.argv[3] == 'document':
                    jsonschema.validate(json.loads(text), schema)
                else:
                    line = jsonschema.Draft202012Validator({'$defs': schema['$defs'], '$ref': '#/$defs/line'})
                    rows = text.split('\\n')
                    assert rows[-1] == '', 'the last line does not end with a new line'
                    for number, row in enumerate(rows[:-1]):
                        value = json.loads(row)
                        first = number == 0
                        assert first == ('decant' in value), 'line %d: the header is the first line only' % (number + 1)
                        line.validate(value)
                print('valid')
            except Exception as error:
                print('invalid: %s' % str(error)[:2000])
            """
        return try PythonOracle.text(
            script, input: try Data(contentsOf: file), arguments: [url.path, lines ? "lines" : "document"])
    }
}
