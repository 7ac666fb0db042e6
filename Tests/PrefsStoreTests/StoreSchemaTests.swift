import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: schemas")
struct StoreSchemaTests {
    @Test("Registered schemas are listed and enforced")
    func registerAndEnforce() async throws {
        try await withStore(makeStore()) { store in
            let fontSize = PreferenceSchema(type: .int, defaultValue: 14, minimum: 8, maximum: 72)
            let mode = PreferenceSchema(type: .enum, defaultValue: "collapsed", choices: ["collapsed", "expanded"])
            let result = try await store.register(schemas: ["timeline.fontSize": fontSize, "timeline.mode": mode])
            #expect(result.revision == 2)
            #expect(try await store.schemas() == ["timeline.fontSize": fontSize, "timeline.mode": mode])
            #expect(try await store.schema(for: "timeline.mode") == mode)
            let missing = await #expect(throws: PrefsError.self) { try await store.schema(for: "no.schema") }
            #expect(missing?.code == .notFound)

            try await store.set("timeline.fontSize", to: 20, scope: "/u")
            let tooBig = await #expect(throws: PrefsError.self) { try await store.set("timeline.fontSize", to: 100, scope: "/u") }
            #expect(tooBig?.code == .invalidValue)
            let wrongChoice = await #expect(throws: PrefsError.self) { try await store.set("timeline.mode", to: "hidden") }
            #expect(wrongChoice?.code == .invalidValue)
            #expect(try await store.resolve("timeline.fontSize", scope: "/u").value == 20)
            #expect(try await store.resolve("timeline.mode").value == "collapsed")
            #expect(try await store.status().revision == 3)
        }
    }

    @Test("A schema that a stored value breaks is refused, naming the scope; nothing is registered")
    func refusedByStoredValue() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("timeline.fontSize", to: 14)
            try await store.set("timeline.fontSize", to: 200, scope: "/accounts/alice")
            let error = await #expect(throws: PrefsError.self) {
                try await store.register(schemas: [
                    "another.key": PreferenceSchema(type: .bool),
                    "timeline.fontSize": PreferenceSchema(type: .int, minimum: 8, maximum: 72),
                ])
            }
            #expect(error?.code == .invalidSchema)
            #expect(error?.message.contains("/accounts/alice") == true)
            // All or nothing: the other schema of the call is not registered either.
            #expect(try await store.schemas().isEmpty)
            #expect(try await store.status().revision == 2)

            // Once the value is gone, the schema fits.
            try await store.reset("timeline.fontSize", scope: "/accounts/alice", recursive: false)
            try await store.register(schemas: ["timeline.fontSize": PreferenceSchema(type: .int, minimum: 8, maximum: 72)])
            #expect(try await store.schemas().count == 1)
        }
    }

    @Test("A schema whose type does not fit a stored value is refused")
    func refusedByType() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("flag", to: "yes", scope: "/x")
            let error = await #expect(throws: PrefsError.self) {
                try await store.register(schemas: ["flag": PreferenceSchema(type: .bool)])
            }
            #expect(error?.code == .invalidSchema)
        }
    }

    @Test("Contradictory definitions and bad keys are refused before anything is written")
    func badDefinitions() async throws {
        try await withStore(makeStore()) { store throws in
            let badDefault = await #expect(throws: PrefsError.self) {
                try await store.register(schemas: ["k": PreferenceSchema(type: .int, defaultValue: "x")])
            }
            #expect(badDefault?.code == .invalidSchema)
            let badKey = await #expect(throws: PrefsError.self) {
                try await store.register(schemas: ["K": PreferenceSchema(type: .int)])
            }
            #expect(badKey?.code == .invalidKey)
            #expect(try await store.status().revision == 0)
        }
    }

    @Test("Registering the same schema again changes nothing; a different one replaces it")
    func replace() async throws {
        try await withStore(makeStore()) { store throws in
            let first = PreferenceSchema(type: .int, defaultValue: 1)
            #expect(try await store.register(schemas: ["k": first]).revision == 1)
            #expect(try await store.register(schemas: ["k": first]).revision == 1)
            let second = PreferenceSchema(type: .int, defaultValue: 2)
            #expect(try await store.register(schemas: ["k": second]).revision == 2)
            #expect(try await store.resolve("k").value == 2)
            #expect(try await store.schema(for: "k") == second)
        }
    }
}
