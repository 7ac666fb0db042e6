import PrefsKit
import Testing

@Suite("Preference write rules")
struct PreferenceWriteRulesTests {
    private let rules = PreferenceWriteRules.standard

    private func locked(at scopes: [ScopePath], schema: PreferenceSchema? = nil) -> KeyState {
        var state = KeyState(schema: schema)
        for (index, scope) in scopes.enumerated() { state.locks[scope] = Revision(index + 1) }
        return state
    }

    @Test("A plain set passes")
    func plainSet() throws {
        try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: "/x", state: nil)
        try rules.checkSet(key: try KeyName("a.b"), value: ["deep": [1, "two"]], scope: .root, state: KeyState())
    }

    @Test("An invalid key is refused first")
    func invalidKey() {
        let error = #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("A"), value: 1, scope: .root, state: nil) }
        #expect(error?.code == .invalidKey)
        let reset = #expect(throws: PrefsError.self) { try rules.checkReset(key: try KeyName("a..b"), scope: .root, state: nil) }
        #expect(reset?.code == .invalidKey)
    }

    @Test("Setting below a lock is refused with locked, carrying the lock; the message names no client's command")
    func setBelowLock() {
        let state = locked(at: ["/accounts"])
        for scope: ScopePath in ["/accounts/alice", "/accounts/alice/threads/42"] {
            let error = #expect(throws: PrefsError.self) {
                try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: scope, state: state)
            }
            #expect(error?.code == .locked)
            #expect(error?.lock == PreferenceLock(key: "a.b", scope: "/accounts"))
            #expect(error?.message.contains("locked at /accounts") == true)
            #expect(error?.message.contains("remove the lock") == true)
            #expect(error?.message.contains("prefsctl") == false)
        }
    }

    @Test("Resetting below a lock is refused with locked")
    func resetBelowLock() {
        let error = #expect(throws: PrefsError.self) {
            try rules.checkReset(key: try KeyName("a.b"), scope: "/accounts/alice", state: locked(at: ["/accounts"]))
        }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("cannot be reset") == true)
    }

    @Test("Setting and resetting AT the lock scope is allowed, and so is above it or beside it")
    func atOrAboveLock() throws {
        let state = locked(at: ["/accounts"])
        try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: "/accounts", state: state)
        try rules.checkReset(key: try KeyName("a.b"), scope: "/accounts", state: state)
        try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: .root, state: state)
        try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: "/other", state: state)
        try rules.checkSet(key: try KeyName("a.b"), value: 1, scope: "/accountsx", state: state)
    }

    @Test("With two locks, only the highest scope may be written")
    func nestedLocks() throws {
        let state = locked(at: ["/a", "/a/b"])
        try rules.checkSet(key: try KeyName("k"), value: 1, scope: "/a", state: state)
        let error = #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("k"), value: 1, scope: "/a/b", state: state) }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("locked at /a,") == true)
    }

    @Test("null is refused: resetting is how a value is removed")
    func nullRefused() {
        let error = #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("a.b"), value: .null, scope: .root, state: nil) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("reset") == true)
        // Even under a json schema, which takes anything else.
        let withSchema = KeyState(schema: PreferenceSchema(type: .json))
        #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("a.b"), value: nil, scope: .root, state: withSchema) }
    }

    @Test("Nested nulls are ordinary JSON")
    func nestedNull() throws {
        try rules.checkSet(key: try KeyName("a.b"), value: [nil], scope: .root, state: nil)
        try rules.checkSet(key: try KeyName("a.b"), value: ["x": nil], scope: .root, state: nil)
    }

    @Test("A value over the size limit is refused with too_large; at the limit it passes")
    func tooLarge() throws {
        let small = PreferenceWriteRules(maximumValueBytes: 10)
        try small.checkSet(key: try KeyName("k"), value: "12345678", scope: .root, state: nil)  // 10 bytes with quotes
        let error = #expect(throws: PrefsError.self) {
            try small.checkSet(key: try KeyName("k"), value: "123456789", scope: .root, state: nil)
        }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("11 bytes") == true)
        #expect(error?.message.contains("10 bytes") == true)
    }

    @Test("The standard limit is 64 KiB of canonical JSON")
    func standardLimit() throws {
        #expect(PreferenceWriteRules.standard.maximumValueBytes == 65_536)
        let fits = JSONValue.string(String(repeating: "x", count: 65_534))
        try rules.checkValue(fits, for: "k", schema: nil)
        let over = JSONValue.string(String(repeating: "x", count: 65_535))
        let error = #expect(throws: PrefsError.self) { try rules.checkValue(over, for: "k", schema: nil) }
        #expect(error?.code == .tooLarge)
    }

    @Test("Strict mode refuses keys without a schema with unknown_key, and accepts those with one")
    func strict() throws {
        let strict = PreferenceWriteRules(strict: true)
        let error = #expect(throws: PrefsError.self) { try strict.checkSet(key: try KeyName("a.b"), value: 1, scope: .root, state: nil) }
        #expect(error?.code == .unknownKey)
        #expect(error?.message.contains("--strict") == true)
        #expect(error?.message.contains("prefsctl") == false)
        // A key with values and locks but no schema is still unknown.
        #expect(throws: PrefsError.self) { try strict.checkSet(key: try KeyName("a.b"), value: 1, scope: .root, state: locked(at: ["/x"])) }
        try strict.checkSet(key: try KeyName("a.b"), value: 1, scope: .root, state: KeyState(schema: PreferenceSchema(type: .int)))
        // Not strict: no schema is fine.
        #expect(!PreferenceWriteRules.standard.strict)
    }

    @Test("A value that breaks the schema is refused with invalid_value")
    func schemaRefusal() {
        let state = KeyState(schema: PreferenceSchema(type: .int, minimum: 8))
        let error = #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("k"), value: 7, scope: .root, state: state) }
        #expect(error?.code == .invalidValue)
        #expect(throws: PrefsError.self) { try rules.checkSet(key: try KeyName("k"), value: "8", scope: .root, state: state) }
    }

    @Test("Resetting needs no value checks and passes without a lock")
    func resetPasses() throws {
        try PreferenceWriteRules(strict: true).checkReset(key: try KeyName("a.b"), scope: "/x", state: nil)
        try rules.checkNotBelowLock(key: "a.b", scope: "/x", state: nil, doing: "set")
    }

    @Test("Numbers without a JSON form (NaN, infinity) are refused with invalid_value", arguments: [Double.nan, .infinity, -.infinity])
    func nonFinite(number: Double) {
        let error = #expect(throws: PrefsError.self) {
            try rules.checkValue(.number(number), for: "k", schema: nil)
        }
        #expect(error?.code == .invalidValue)
    }
}
