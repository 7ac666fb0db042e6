import PrefsKit
import Testing

/// A string enum, so its key's schema is an enum with these choices.
enum MacroUsageMode: String, Codable, Sendable, CaseIterable {
    case collapsed, expanded, hidden
}

extension PreferenceValues {
    @Preference("timeline.x") var macroUsageX: Int = 1
    @Preference("macroUsage.mode") var macroUsageMode: MacroUsageMode = .collapsed
    @Preference("macroUsage.languages") var macroUsageLanguages: [String] = ["en", "fr"]
    @Preference("macroUsage.lastAccount") var macroUsageLastAccount: String?
    @Preference("macroUsage.secret") private var macroUsageSecret: String = "hidden"

    /// The private property's key name, read where the property is visible.
    static var macroUsageSecretKeyName: String { key(for: \.macroUsageSecret).name }
}

/// In a public extension the generated key type is public, and its members must be too.
public extension PreferenceValues {
    @Preference("macroUsage.public") var macroUsagePublic: Double = 0.5
}

/// The same kind of key declared by hand, to compare with the macro's.
extension PreferenceValues {
    struct HandWrittenModeKey: PreferenceKey {
        static let name = "macroUsage.handWrittenMode"
        static let defaultValue = MacroUsageMode.collapsed
    }

    var macroUsageHandWrittenMode: MacroUsageMode {
        get { self[HandWrittenModeKey.self] }
        set { self[HandWrittenModeKey.self] = newValue }
    }
}

@Suite("@Preference in use")
struct PreferenceMacroUsageTests {
    @Test("Reading a key no JSON sets gives its default")
    func defaults() {
        let values = PreferenceValues()
        #expect(values.macroUsageX == 1)
        #expect(values.macroUsageMode == .collapsed)
        #expect(values.macroUsageLanguages == ["en", "fr"])
        #expect(values.macroUsageLastAccount == nil)
        #expect(values.macroUsagePublic == 0.5)
    }

    @Test("Reading decodes the key's JSON; JSON of the wrong type gives the default")
    func reading() {
        #expect(PreferenceValues(json: ["timeline.x": 3]).macroUsageX == 3)
        #expect(PreferenceValues(json: ["timeline.x": "three"]).macroUsageX == 1)
        #expect(PreferenceValues(json: ["macroUsage.mode": "hidden"]).macroUsageMode == .hidden)
        #expect(PreferenceValues(json: ["macroUsage.mode": "sideways"]).macroUsageMode == .collapsed)
        #expect(PreferenceValues(json: ["macroUsage.languages": ["de"]]).macroUsageLanguages == ["de"])
        #expect(PreferenceValues(json: ["macroUsage.lastAccount": "alice"]).macroUsageLastAccount == "alice")
    }

    @Test("Setting writes the key's JSON under its name")
    func writing() {
        var values = PreferenceValues()
        values.macroUsageX = 7
        values.macroUsageMode = .expanded
        values.macroUsageLanguages = []
        values.macroUsageLastAccount = "bob"
        #expect(
            values.json == [
                "timeline.x": 7,
                "macroUsage.mode": "expanded",
                "macroUsage.languages": [],
                "macroUsage.lastAccount": "bob",
            ]
        )
        #expect(values.macroUsageX == 7)
        #expect(values.macroUsageMode == .expanded)

        values.macroUsageLastAccount = nil
        #expect(values.json["macroUsage.lastAccount"] == .null)
        #expect(values.macroUsageLastAccount == nil)
    }

    @Test("The key path names the macro's key: its name, and the peer type named from the property")
    func keyForKeyPath() {
        #expect(PreferenceValues.key(for: \.macroUsageX).name == "timeline.x")
        #expect(PreferenceValues.key(for: \.macroUsageMode).name == "macroUsage.mode")
        #expect(PreferenceValues.key(for: \.macroUsageLastAccount).name == "macroUsage.lastAccount")
        #expect(PreferenceValues.key(for: \.macroUsagePublic).name == "macroUsage.public")
        #expect(PreferenceValues.macroUsageSecretKeyName == "macroUsage.secret")
        #expect(PreferenceValues.key(for: \.macroUsageX) is PreferenceValues.__PreferenceKey_macroUsageX.Type)
        #expect(PreferenceValues.__PreferenceKey_macroUsageMode.defaultValue == .collapsed)
    }

    @Test("The key's schema is inferred from the property's type and default")
    func schema() {
        let mode = PreferenceValues.key(for: \.macroUsageMode).schema
        #expect(mode.type == .enum)
        #expect(mode.choices == ["collapsed", "expanded", "hidden"])
        #expect(mode.defaultValue == "collapsed")

        let x = PreferenceValues.key(for: \.macroUsageX).schema
        #expect(x.type == .int)
        #expect(x.defaultValue == 1)

        let languages = PreferenceValues.key(for: \.macroUsageLanguages).schema
        #expect(languages.type == .array)
        #expect(languages.defaultValue == ["en", "fr"])

        #expect(PreferenceValues.key(for: \.macroUsagePublic).schema.type == .double)
    }

    @Test("A macro key and a hand-written key of the same type behave alike")
    func sameAsHandWritten() {
        let macro = PreferenceValues.key(for: \.macroUsageMode).schema
        let handWritten = PreferenceValues.key(for: \.macroUsageHandWrittenMode).schema
        #expect(macro == handWritten)

        var values = PreferenceValues()
        values.macroUsageMode = .hidden
        values.macroUsageHandWrittenMode = .hidden
        #expect(values.json["macroUsage.mode"] == values.json["macroUsage.handWrittenMode"])
    }
}
