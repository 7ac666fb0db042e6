import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: conditional writes (ifRevision)")
struct ConditionalWriteTests {
    @Test("A set goes through at the key's revision at the scope, and is refused, changing nothing, at any other")
    func set() async throws {
        try await withStore(makeStore()) { store in
            let first = try await store.set("k", to: 1, scope: "/a", ifRevision: 0)
            let second = try await store.set("k", to: 2, scope: "/a", ifRevision: first.revision)
            #expect(second.revision == first.revision + 1)

            let stale = await #expect(throws: PrefsError.self) { try await store.set("k", to: 3, scope: "/a", ifRevision: first.revision) }
            #expect(stale?.code == .staleRevision)
            #expect(stale?.currentPreference == ScopedPreference(key: "k", scope: "/a", state: KeyState(values: ["/a": StoredValue(value: 2, revision: second.revision)])))
            #expect(stale?.message.contains("is at revision \(second.revision) at /a, not \(first.revision)") == true)
            // Even a set to the value already there is refused: the condition comes first.
            await #expect(throws: PrefsError.self) { try await store.set("k", to: 2, scope: "/a", ifRevision: first.revision) }
            #expect(try await store.resolve("k", scope: "/a").value == 2)
            #expect(try await store.status().revision == second.revision)
        }
    }

    @Test("0 means nothing set or locked at the scope: create only, whatever is inherited from above")
    func createOnly() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 2, scope: "/a", ifRevision: 0)
            let taken = await #expect(throws: PrefsError.self) { try await store.set("k", to: 3, scope: "/a", ifRevision: 0) }
            #expect(taken?.currentPreference?.value == 2)
            // A reset brings the scope back to revision 0.
            try await store.reset("k", scope: "/a", recursive: false, ifRevision: try #require(taken?.currentPreference?.revision))
            try await store.set("k", to: 4, scope: "/a", ifRevision: 0)
            #expect(try await store.resolve("k", scope: "/a").value == 4)
        }
    }

    @Test("A lock at the scope is part of the key's revision there; lock and unlock are conditional too")
    func locks() async throws {
        try await withStore(makeStore()) { store in
            let set = try await store.set("k", to: 1, scope: "/a")
            let lock = try await store.lock("k", scope: "/a", ifRevision: set.revision)
            // The lock moved the key's revision at /a on: a set based on the value alone is stale.
            let stale = await #expect(throws: PrefsError.self) { try await store.set("k", to: 2, scope: "/a", ifRevision: set.revision) }
            #expect(stale?.currentPreference?.revision == lock.revision)
            #expect(stale?.currentPreference?.locked == true)
            await #expect(throws: PrefsError.self) { try await store.unlock("k", scope: "/a", ifRevision: set.revision) }
            #expect(try await store.resolve("k", scope: "/a/b").source == .lock("/a"))
            let unlock = try await store.unlock("k", scope: "/a", ifRevision: lock.revision)
            #expect(unlock.removed == 1)
            // Without the lock, the value's revision is the key's again.
            try await store.set("k", to: 2, scope: "/a", ifRevision: set.revision)
            // A lock where nothing is set: 0, and then the lock's own revision.
            await #expect(throws: PrefsError.self) { try await store.lock("k", scope: "/b", ifRevision: 1) }
            let empty = try await store.lock("k", scope: "/b", ifRevision: 0)
            try await store.unlock("k", scope: "/b", ifRevision: empty.revision)
        }
    }

    @Test("Of many writers racing with the same ifRevision, exactly one goes through")
    func race() async throws {
        try await withStore(makeStore()) { store in
            let base = try await store.set("k", to: 0, scope: "/a")
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for index in 1...16 {
                    group.addTask {
                        do {
                            try await store.set("k", to: .integer(Int64(index)), scope: "/a", ifRevision: base.revision)
                            return true
                        } catch {
                            return false
                        }
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            #expect(try await store.status().revision == base.revision + 1)
        }
    }
}
