import PrefsKit
import Testing

/// The resolution chain (README, Scopes): override ?? lock ?? nearest scope ?? default ?? none.
@Suite("Preference resolution")
struct PreferenceResolverTests {
    private let key = "timeline.fontSize"

    private func state(
        values: [ScopePath: JSONValue] = [:], locks: [ScopePath] = [], schemaDefault: JSONValue? = nil
    ) -> KeyState {
        var revision: Revision = 0
        var state = KeyState()
        for (scope, value) in values.sorted(by: { $0.key < $1.key }) {
            revision += 1
            state.values[scope] = StoredValue(value: value, revision: revision)
        }
        for scope in locks {
            revision += 1
            state.locks[scope] = revision
        }
        if let schemaDefault { state.schema = PreferenceSchema(type: .json, defaultValue: schemaDefault) }
        return state
    }

    private func resolve(
        at scope: ScopePath, _ state: KeyState?, override: JSONValue? = nil, explain: Bool = false
    ) -> ResolvedPreference {
        PreferenceResolver.resolve(key: key, at: scope, state: state, override: override, revision: 99, explain: explain)
    }

    // MARK: - Each layer on its own

    @Test("Nothing anywhere: null with source none")
    func none() {
        for state in [nil, KeyState()] {
            let resolved = resolve(at: "/a/b", state)
            #expect(resolved.value == .null)
            #expect(resolved.source == .none)
            #expect(!resolved.isSet)
            #expect(resolved.key == key)
            #expect(resolved.scope == "/a/b")
            #expect(resolved.revision == 99)
            #expect(resolved.chain == nil)
        }
    }

    @Test("Only a schema default: the default")
    func defaultOnly() {
        let resolved = resolve(at: "/a/b", state(schemaDefault: 14))
        #expect(resolved.value == 14)
        #expect(resolved.source == .default)
        #expect(resolved.isSet)
    }

    @Test("A schema without a default does not count as a value")
    func schemaWithoutDefault() {
        var keyState = KeyState()
        keyState.schema = PreferenceSchema(type: .int)
        #expect(resolve(at: "/", keyState).source == .none)
    }

    @Test("A value at the scope itself")
    func ownScope() {
        let resolved = resolve(at: "/a", state(values: ["/a": 15], schemaDefault: 14))
        #expect(resolved.value == 15)
        #expect(resolved.source == .scope("/a"))
    }

    @Test("An override beats everything, even a lock")
    func overrideWins() {
        let keyState = state(values: ["/": 1, "/a": 2, "/a/b": 3], locks: ["/"], schemaDefault: 0)
        for scope: ScopePath in ["/", "/a", "/a/b", "/z"] {
            let resolved = resolve(at: scope, keyState, override: 42)
            #expect(resolved.value == 42)
            #expect(resolved.source == .override)
        }
    }

    // MARK: - Scopes

    @Test("The nearest scope wins, walking up to the root")
    func nearestScopeWins() {
        let keyState = state(values: ["/": 1, "/accounts/alice": 2, "/accounts/alice/threads/42": 3], schemaDefault: 0)
        let expectations: [(ScopePath, JSONValue, PreferenceSource)] = [
            ("/", 1, .scope("/")),
            ("/accounts", 1, .scope("/")),
            ("/accounts/alice", 2, .scope("/accounts/alice")),
            ("/accounts/alice/threads", 2, .scope("/accounts/alice")),
            ("/accounts/alice/threads/42", 3, .scope("/accounts/alice/threads/42")),
            ("/accounts/alice/threads/42/x", 3, .scope("/accounts/alice/threads/42")),
            ("/accounts/alice/threads/43", 2, .scope("/accounts/alice")),
            ("/accounts/bob", 1, .scope("/")),
            ("/accounts/alicex", 1, .scope("/")),
        ]
        for (scope, value, source) in expectations {
            let resolved = resolve(at: scope, keyState)
            #expect(resolved.value == value, "at \(scope)")
            #expect(resolved.source == source, "at \(scope)")
        }
    }

    @Test("A value below the resolved scope does not apply to it")
    func valuesBelowDoNotApply() {
        let resolved = resolve(at: "/a", state(values: ["/a/b": 3], schemaDefault: 0))
        #expect(resolved.value == 0)
        #expect(resolved.source == .default)
        #expect(resolve(at: "/a", state(values: ["/a/b": 3])).source == .none)
    }

    @Test("A scope value beats the default")
    func scopeBeatsDefault() {
        let resolved = resolve(at: "/x", state(values: ["/": 5], schemaDefault: 14))
        #expect(resolved.value == 5)
        #expect(resolved.source == .scope("/"))
    }

    // MARK: - Locks

    @Test("A lock beats a nearer scope value and pins the lock scope's value")
    func lockBeatsScope() {
        let keyState = state(values: ["/": 1, "/a": 2, "/a/b": 3], locks: ["/a"])
        for scope: ScopePath in ["/a", "/a/b", "/a/b/c"] {
            let resolved = resolve(at: scope, keyState)
            #expect(resolved.value == 2, "at \(scope)")
            #expect(resolved.source == .lock("/a"), "at \(scope)")
        }
        // Above and beside the lock, it does not apply.
        #expect(resolve(at: "/", keyState).source == .scope("/"))
        #expect(resolve(at: "/b", keyState).value == 1)
    }

    @Test("A lock at a scope without its own value pins what resolves there: an ancestor's value")
    func lockPinsAncestorValue() {
        let keyState = state(values: ["/": 1, "/a/b": 3], locks: ["/a"], schemaDefault: 0)
        let resolved = resolve(at: "/a/b", keyState)
        #expect(resolved.value == 1)
        #expect(resolved.source == .lock("/a"))
    }

    @Test("A lock with no value at or above it pins the default, else null")
    func lockPinsDefault() {
        let withDefault = resolve(at: "/a/b", state(values: ["/a/b": 3], locks: ["/a"], schemaDefault: 14))
        #expect(withDefault.value == 14)
        #expect(withDefault.source == .lock("/a"))
        let without = resolve(at: "/a/b", state(values: ["/a/b": 3], locks: ["/a"]))
        #expect(without.value == .null)
        #expect(without.source == .lock("/a"))
    }

    @Test("With locks above and below, the highest locked ancestor wins")
    func highestLockWins() {
        let keyState = state(values: ["/": 1, "/a": 2, "/a/b": 3, "/a/b/c": 4], locks: ["/a", "/a/b/c"])
        for scope: ScopePath in ["/a/b/c", "/a/b/c/d"] {
            let resolved = resolve(at: scope, keyState)
            #expect(resolved.value == 2, "at \(scope)")
            #expect(resolved.source == .lock("/a"), "at \(scope)")
        }
        // A lock below the resolved scope has no effect on it.
        let lowerOnly = state(values: ["/": 1, "/a/b/c": 4], locks: ["/a/b/c"])
        #expect(resolve(at: "/a/b", lowerOnly).source == .scope("/"))
        #expect(resolve(at: "/a/b/c/d", lowerOnly).value == 4)
        #expect(resolve(at: "/a/b/c/d", lowerOnly).source == .lock("/a/b/c"))
        // A root lock governs everything.
        let rootLock = state(values: ["/": 1, "/a": 2], locks: ["/", "/a"])
        #expect(resolve(at: "/a/b", rootLock).value == 1)
        #expect(resolve(at: "/a/b", rootLock).source == .lock("/"))
    }

    @Test("A lock beats the default")
    func lockBeatsDefault() {
        let resolved = resolve(at: "/", state(values: ["/": 7], locks: ["/"], schemaDefault: 14))
        #expect(resolved.value == 7)
        #expect(resolved.source == .lock("/"))
    }

    @Test("KeyState finds the governing lock and the nearest value")
    func keyStateHelpers() {
        let keyState = state(values: ["/a": 2], locks: ["/a/b", "/a"])
        #expect(keyState.governingLock(at: "/a/b/c") == "/a")
        #expect(keyState.governingLock(at: "/a") == "/a")
        #expect(keyState.governingLock(at: "/") == nil)
        #expect(keyState.nearestValue(at: "/a/b")?.scope == "/a")
        #expect(keyState.nearestValue(at: "/a/b")?.stored.value == 2)
        #expect(keyState.nearestValue(at: "/") == nil)
        #expect(!keyState.isEmpty)
        #expect(KeyState().isEmpty)
    }

    // MARK: - Explain

    @Test("Explain lists every layer: override, lock, each scope up to the root, default")
    func explainFullChain() {
        let keyState = state(values: ["/": 1, "/a/b": 3], locks: ["/a"], schemaDefault: 14)
        // Revisions: "/" = 1, "/a/b" = 2, lock "/a" = 3.
        let resolved = resolve(at: "/a/b", keyState, override: 42, explain: true)
        #expect(resolved.value == 42)
        #expect(
            resolved.chain == [
                ChainLayer(layer: .override, value: 42, revision: nil),
                ChainLayer(layer: .lock("/a"), value: 1, revision: 3),
                ChainLayer(layer: .scope("/a/b"), value: 3, revision: 2),
                ChainLayer(layer: .scope("/a"), value: nil, revision: nil),
                ChainLayer(layer: .scope("/"), value: 1, revision: 1),
                ChainLayer(layer: .default, value: 14, revision: nil),
            ])
    }

    @Test("Explain leaves out layers that do not exist: no override, no lock, no default")
    func explainMinimalChain() {
        let resolved = resolve(at: "/a", state(values: ["/a": 2]), explain: true)
        #expect(resolved.source == .scope("/a"))
        #expect(
            resolved.chain == [
                ChainLayer(layer: .scope("/a"), value: 2, revision: 1),
                ChainLayer(layer: .scope("/"), value: nil, revision: nil),
            ])
        let nothing = resolve(at: "/", nil, explain: true)
        #expect(nothing.chain == [ChainLayer(layer: .scope("/"), value: nil, revision: nil)])
    }

    @Test("Explain does not change the answer")
    func explainSameAnswer() {
        let keyState = state(values: ["/": 1, "/a": 2], locks: ["/a"], schemaDefault: 0)
        for scope: ScopePath in ["/", "/a", "/a/b", "/c"] {
            let plain = resolve(at: scope, keyState)
            let explained = resolve(at: scope, keyState, explain: true)
            #expect(plain.value == explained.value)
            #expect(plain.source == explained.source)
            #expect(explained.chain != nil)
        }
    }

    @Test("effectiveValue gives nil and none when nothing applies")
    func effectiveValue() {
        let nothing = PreferenceResolver.effectiveValue(at: "/", state: KeyState(), override: nil)
        #expect(nothing.value == nil)
        #expect(nothing.source == .none)
        let something = PreferenceResolver.effectiveValue(at: "/a", state: state(values: ["/": 1]), override: nil)
        #expect(something.value == 1)
        #expect(something.source == .scope("/"))
    }
}
