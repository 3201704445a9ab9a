import DecantCore
import Testing

/// A format's own options live in `FormatOptions` by their type, without the core knowing them: two test-only
/// formats' options here.
@Suite struct FormatSpecificOptionsTests {
    struct TabbedOptions: FormatSpecificOptions {
        var separator = ","
        var header = true
        init() {}
    }

    struct PagedOptions: FormatSpecificOptions {
        var pageSize = 4096
        init() {}
    }

    @Test func unsetOptionsAreTheFormatsDefaults() {
        let options = FormatOptions()
        #expect(options[TabbedOptions.self] == TabbedOptions())
        #expect(options[PagedOptions.self].pageSize == 4096)
    }

    @Test func eachFormatReadsWhatWasSetForIt() {
        var options = FormatOptions()
        options[TabbedOptions.self].separator = ";"
        options[PagedOptions.self].pageSize = 512
        #expect(options[TabbedOptions.self].separator == ";")
        #expect(options[TabbedOptions.self].header)
        #expect(options[PagedOptions.self].pageSize == 512)
    }

    @Test func equalSettingsAreEqualOptionsWhateverTheOrderTheyWereSet() {
        var first = FormatOptions()
        first[TabbedOptions.self].separator = "\t"
        first[PagedOptions.self].pageSize = 1024
        var second = FormatOptions()
        second[PagedOptions.self].pageSize = 1024
        second[TabbedOptions.self].separator = "\t"
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)

        second[PagedOptions.self].pageSize = 2048
        #expect(first != second)
    }

    @Test func optionsSetBackToTheirDefaultsEqualOptionsNeverSet() {
        var options = FormatOptions()
        options[TabbedOptions.self].header = false
        #expect(options != FormatOptions())
        options[TabbedOptions.self].header = true
        #expect(options == FormatOptions())
        #expect(options.hashValue == FormatOptions().hashValue)
    }
}
