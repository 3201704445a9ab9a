import DecantCore
import Testing

/// A `userInfo` value read as a flag (SchemaBuilder's `NSPersistentHistoryTrackingKey`-like switches) answers as
/// NSString's `boolValue` does: white space, then one optional sign, then zeros are skipped, and the next character
/// decides.
@Suite("userInfo values as flags")
struct UserInfoValueTests {
    @Test(arguments: [
        ("YES", true), ("yes", true), ("true", true), ("1", true), (" 7", true), ("\t\n y", true), ("+001", true),
        ("-2", true), ("NO", false), ("0", false), ("", false), ("0 1", false), ("+-1", false), ("--1", false),
        ("000", false), ("x", false),
    ])
    func aStringIsAFlagAsNSStringReadsIt(_ text: String, _ expected: Bool) {
        #expect(UserInfoValue.string(text).boolValue == expected, "\(text.debugDescription)")
    }

    @Test func otherKindsAnswerByValue() {
        #expect(UserInfoValue.integer(0).boolValue == false)
        #expect(UserInfoValue.integer(-3).boolValue == true)
        #expect(UserInfoValue.real(0.5).boolValue == true)
        #expect(UserInfoValue.bool(false).boolValue == false)
        #expect(UserInfoValue.array([]).boolValue == nil)
    }
}
