import Decant
import DecantTestSupport
import Foundation
import Testing

/// Batches: shards that together take every input once, results in input order whatever the parallelism, and a
/// JUnit report that a JUnit reader accepts.
@Suite("Batch runs")
struct BatchRunTests {
    static let inputs = (1...10).map { URL(fileURLWithPath: "/fixtures/store-\($0).sqlite") }

    @Test func shardsPartitionTheInputs() throws {
        var seen: [URL] = []
        for index in 1...3 {
            let shard = try BatchRun.Shard(parsing: "\(index)/3")
            seen += BatchRun(inputs: Self.inputs.reversed(), shard: shard).inputs
        }
        #expect(seen.count == Self.inputs.count)
        #expect(Set(seen) == Set(Self.inputs))
        for bad in ["0/3", "4/3", "1/0", "a/b", "2"] {
            let error = #expect(throws: DecantError.self) { try BatchRun.Shard(parsing: bad) }
            #expect(error?.code == .usage)
        }
    }

    @Test func resultsComeInInputOrderWithTheirExitCodes() {
        let batch = BatchRun(inputs: Self.inputs)
        let results = batch.run(jobs: 4) { input in
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.01))
            if input.lastPathComponent == "store-3.sqlite" {
                throw DecantError(.modelMismatch, "no version matches", at: Location(path: input.path))
            }
            return "migrated"
        }
        #expect(results.map(\.input) == batch.inputs.map(\.path))
        #expect(results.filter { !$0.passed }.map(\.exitCode) == [65])
        #expect(BatchRun.exitCode(of: results) == 65)
        #expect(BatchRun.exitCode(of: results.filter(\.passed)) == 0)
    }

    @Test func junitReportParses() throws {
        let results = BatchRun(inputs: Self.inputs.prefix(3).map { $0 }).run { input in
            if input.lastPathComponent == "store-2.sqlite" { throw DecantError(.malformedInput, "bad <row> & \u{1}") }
            return "ok"
        }
        let xml = BatchRun.junit(results, suite: "decant migrate")
        let script = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            suite = root.find('testsuite')
            cases = suite.findall('testcase')
            print(root.get('tests'), root.get('failures'), len(cases), sum(1 for c in cases if c.find('failure') is not None))
            """
        #expect(try PythonOracle.text(script, input: xml) == "3 1 3 1")
    }

    /// Mixed results (issue 21): inputs that ran but found problems make 1, unless an input or I/O failure is among
    /// them, whose code wins whatever its place; each result's line names its input once.
    @Test func mixedResultsExitWithTheFailureThatIsNotAProblem() {
        let batch = BatchRun(inputs: (1...4).map { URL(fileURLWithPath: "s\($0).sqlite") })
        let results = batch.run(jobs: 2) { input in
            switch input.lastPathComponent {
            case "s1.sqlite":
                throw DecantError(.validationFailed, "2 failures", at: Location(path: input.displayPath, entity: "Item"))
            case "s3.sqlite": throw DecantError(.ioError, "cannot read", at: Location(path: input.displayPath))
            default: return "ok"
            }
        }
        #expect(results.map(\.exitCode) == [1, 0, 74, 0])
        #expect(BatchRun.exitCode(of: results) == 74)
        #expect(BatchRun.exitCode(of: results.filter { $0.exitCode != 74 }) == 1)
        #expect(BatchRun.exitCode(of: results.filter(\.passed)) == 0)
        // The path is not repeated after the input it belongs to; the rest of the place stays.
        #expect(results[0].message == "entity Item: validation failed: 2 failures")
        #expect(results[2].message == "I/O error: cannot read")
        #expect(results.allSatisfy { !$0.message.contains($0.input) })
    }
}
