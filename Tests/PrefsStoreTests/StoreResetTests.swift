import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: reset")
struct StoreResetTests {
    @Test("Reset removes the value at one scope; resolution falls back to the parent")
    func resetOne() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 2, scope: "/a")
            try await store.set("k", to: 3, scope: "/a/b")
            let result = try await store.reset("k", scope: "/a", recursive: false)
            #expect(result.removed == 1)
            #expect(result.revision == 4)
            #expect(try await store.resolve("k", scope: "/a").source == .scope("/"))
            #expect(try await store.resolve("k", scope: "/a/b").value == 3)
            #expect(try await store.resolve("k").value == 1)
        }
    }

    @Test("Resetting what is not set removes nothing and uses no revision")
    func resetNothing() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1, scope: "/a")
            let result = try await store.reset("k", scope: "/b", recursive: false)
            #expect(result.removed == 0)
            #expect(result.revision == 1)
            let unknown = try await store.reset("other", scope: .root, recursive: true)
            #expect(unknown.removed == 0)
            #expect(try await store.status().revision == 1)
            #expect(try await store.set("k", to: 2).revision == 2)
        }
    }

    @Test("Recursive reset removes the scope and everything below it, not siblings or ancestors")
    func recursive() async throws {
        try await withStore(makeStore()) { store in
            for scope: ScopePath in ["/", "/a", "/a/b", "/a/b/c", "/ab", "/b/a"] {
                try await store.set("k", to: .string(scope.path), scope: scope)
            }
            try await store.set("other", to: 1, scope: "/a/b")
            let result = try await store.reset("k", scope: "/a", recursive: true)
            #expect(result.removed == 3)
            // One revision per removed value.
            #expect(result.revision == 10)
            let remaining = try await store.dump(scope: .root).values.map { "\($0.key)\($0.scope.path)" }
            #expect(remaining == ["k/", "k/ab", "k/b/a", "other/a/b"])
            #expect(try await store.resolve("k", scope: "/a/b/c").value == "/")
        }
    }

    @Test("Recursive reset at the root removes every value of the key, and nothing else")
    func recursiveRoot() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 2, scope: "/x/y")
            try await store.set("j", to: 3, scope: "/x")
            try await store.lock("k", scope: "/z")
            let result = try await store.reset("k", scope: .root, recursive: true)
            #expect(result.removed == 2)
            let dump = try await store.dump(scope: .root)
            #expect(dump.values == [PrefsDump.Value(key: "j", scope: "/x", value: 3)])
            // Locks are not values: reset leaves them.
            #expect(dump.locks == [PrefsDump.Lock(key: "k", scope: "/z")])
        }
    }

    @Test("Reset below a lock is refused with locked; at the lock it is allowed")
    func resetAndLocks() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1, scope: "/a")
            try await store.set("k", to: 2, scope: "/a/b")
            try await store.lock("k", scope: "/a")
            let error = await #expect(throws: PrefsError.self) { try await store.reset("k", scope: "/a/b", recursive: false) }
            #expect(error?.code == .locked)
            #expect(try await store.dump(scope: "/a/b").values.count == 1)
            let atLock = try await store.reset("k", scope: "/a", recursive: false)
            #expect(atLock.removed == 1)
        }
    }

    @Test("An invalid key is refused")
    func invalidKey() async throws {
        try await withStore(makeStore()) { store in
            let error = await #expect(throws: PrefsError.self) { try await store.reset("K", scope: .root, recursive: false) }
            #expect(error?.code == .invalidKey)
        }
    }
}
