import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: batches")
struct StoreBatchTests {
    @Test("A batch applies every operation, each with its own revision, in order")
    func applies() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("old", to: 0, scope: "/x")  // 1
            let result = try await store.apply(
                PreferenceBatch(operations: [
                    .set("a", 1),  // 2
                    .set("b", 2, scope: "/u"),  // 3
                    .reset("old", scope: "/x"),  // 4
                    .set("a", 3, scope: "/u"),  // 5
                ]))
            #expect(result.revisions == [2, 3, 4, 5])
            #expect(result.revision == 5)
            #expect(try await store.resolve("a", scope: "/u").value == 3)
            #expect(try await store.resolve("b", scope: "/u").value == 2)
            #expect(try await store.resolve("old", scope: "/x").source == .none)
            #expect(try await store.status().revision == 5)
        }
    }

    @Test("Later operations see earlier ones of the same batch")
    func seesItself() async throws {
        try await withStore(makeStore()) { store in
            let result = try await store.apply(
                PreferenceBatch(operations: [.set("a", 1, scope: "/u"), .set("a", 2, scope: "/u/v"), .reset("a", scope: "/u", recursive: true)]))
            // The recursive reset removed two values: two revisions; the batch answers the last.
            #expect(result.revisions == [1, 2, 4])
            #expect(try await store.resolve("a", scope: "/u/v").source == .none)
            #expect(try await store.dump(scope: .root).values.isEmpty)
        }
    }

    @Test("A failing operation in the middle leaves nothing and consumes no revision")
    func allOrNothing() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("existing", to: "before")  // 1
            try await store.lock("locked", scope: "/top")  // 2
            try await store.register(schemas: ["typed": PreferenceSchema(type: .int)])  // 3

            let failures: [(PreferenceOperation, PrefsError.Code)] = [
                (.set("locked", 1, scope: "/top/below"), .locked),
                (.set("typed", "not an int"), .invalidValue),
                (.set("x", .null), .invalidValue),
                (.reset("locked", scope: "/top/below"), .locked),
                (PreferenceOperation(op: .set, key: "x", scope: .root, value: nil, recursive: nil), .invalidRequest),
            ]
            for (failing, code) in failures {
                let batch = PreferenceBatch(operations: [
                    .set("existing", "after"), .set("fresh", 1, scope: "/f"), failing, .set("last", 2),
                ])
                let error = await #expect(throws: PrefsError.self) { try await store.apply(batch) }
                #expect(error?.code == code, "\(failing)")
            }
            #expect(try await store.resolve("existing").value == "before")
            #expect(try await store.resolve("fresh", scope: "/f").source == .none)
            #expect(try await store.resolve("last").source == .none)
            #expect(try await store.status().revision == 3)
            #expect(try await store.set("next", to: 1).revision == 4)
        }
    }

    @Test("An invalid key anywhere refuses the whole batch before anything runs")
    func invalidKey() async throws {
        try await withStore(makeStore()) { store throws in
            let error = await #expect(throws: PrefsError.self) {
                try await store.apply(PreferenceBatch(operations: [.set("ok", 1), .set("Not.ok", 2)]))
            }
            #expect(error?.code == .invalidKey)
            #expect(try await store.resolve("ok").source == .none)
            #expect(try await store.status().revision == 0)
        }
    }

    @Test("An empty batch changes nothing")
    func empty() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1)
            let result = try await store.apply(PreferenceBatch(operations: []))
            #expect(result.revisions == [])
            #expect(result.revision == 1)
            #expect(try await store.status().revision == 1)
        }
    }
}
