import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: revisions")
struct StoreRevisionTests {
    @Test("Every change takes the next revision, whatever its kind")
    func oneByOne() async throws {
        try await withStore(makeStore()) { store in
            var revisions: [Revision] = []
            revisions.append(try await store.set("a", to: 1).revision)
            revisions.append(try await store.set("a", to: 2, scope: "/x").revision)
            revisions.append(try await store.lock("a", scope: "/x").revision)
            revisions.append(try await store.unlock("a", scope: "/x").revision)
            revisions.append(try await store.register(schemas: ["a": PreferenceSchema(type: .int)]).revision)
            revisions.append(try await store.reset("a", scope: "/x", recursive: false).revision)
            revisions.append(try await store.set("b", to: true).revision)
            #expect(revisions == Array(1...7))
            #expect(try await store.status().revision == 7)
            #expect(try await store.resolve("a").revision == 7)
        }
    }

    @Test("A batch gives each operation its own revision, continuing the sequence")
    func batch() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 0)
            let result = try await store.apply(PreferenceBatch(operations: (1...5).map { .set("k\($0)", .integer(Int64($0))) }))
            #expect(result.revisions == [2, 3, 4, 5, 6])
            #expect(result.revision == 6)
            #expect(try await store.set("a", to: 1).revision == 7)
            // Each value remembers the revision that set it.
            let chain = try await store.resolve("k3", scope: .root, explain: true).chain
            #expect(chain == [ChainLayer(layer: .scope("/"), value: 3, revision: 4)])
        }
    }

    @Test("Failed writes and no-op writes consume no revision")
    func noGaps() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1)  // 1
            let refusals = [
                await #expect(throws: PrefsError.self) { try await store.set("a", to: .null) },
                await #expect(throws: PrefsError.self) {
                    try await store.apply(PreferenceBatch(operations: [.set("b", 1), .set("c", .null)]))
                },
                await #expect(throws: PrefsError.self) {
                    try await store.register(schemas: ["a": PreferenceSchema(type: .string)])
                },
            ]
            #expect(refusals.map { $0?.code } == [.invalidValue, .invalidValue, .invalidSchema])
            #expect(try await store.unlock("a", scope: .root).removed == 0)
            #expect(try await store.reset("a", scope: "/nothing/here", recursive: true).removed == 0)
            try await store.lock("a", scope: "/l")  // 2
            try await store.lock("a", scope: "/l")
            try await store.register(schemas: ["s": PreferenceSchema(type: .int)])  // 3
            try await store.register(schemas: ["s": PreferenceSchema(type: .int)])
            #expect(try await store.set("a", to: 2).revision == 4)

            // The change log agrees: revisions 1...4, no gap, no repeat.
            var watch = WatchReader(store.watch(WatchRequest(since: 0)))
            let events = try await watch.take(4)
            #expect(events.map(\.revision) == [1, 2, 3, 4])
            #expect(events.map(\.kind) == [.set, .lock, .schema, .set])
        }
    }
}
