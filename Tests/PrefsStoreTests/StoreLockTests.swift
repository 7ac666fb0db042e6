import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: locks")
struct StoreLockTests {
    @Test("A lock pins its scope's value for everything below, and refuses sets below it")
    func pins() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 2, scope: "/org")
            try await store.set("k", to: 3, scope: "/org/team")
            let lock = try await store.lock("k", scope: "/org")
            #expect(lock.revision == 4)

            for scope: ScopePath in ["/org", "/org/team", "/org/team/member"] {
                let resolved = try await store.resolve("k", scope: scope)
                #expect(resolved.value == 2, "at \(scope)")
                #expect(resolved.source == .lock("/org"), "at \(scope)")
            }
            #expect(try await store.resolve("k", scope: "/other").source == .scope("/"))

            let below = await #expect(throws: PrefsError.self) { try await store.set("k", to: 9, scope: "/org/team") }
            #expect(below?.code == .locked)
            #expect(below?.message.contains("/org") == true)
            #expect(try await store.status().revision == 4)

            // At the lock's own scope, setting is allowed and moves the pinned value.
            try await store.set("k", to: 5, scope: "/org")
            #expect(try await store.resolve("k", scope: "/org/team").value == 5)
            // Above the lock too; the lock scope's own value still wins below it.
            try await store.set("k", to: 6)
            #expect(try await store.resolve("k", scope: "/org/team").value == 5)
        }
    }

    @Test("A lock at a scope without a value pins what resolves there")
    func pinsInherited() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 3, scope: "/org/team")
            try await store.lock("k", scope: "/org")
            #expect(try await store.resolve("k", scope: "/org/team").value == 1)
            try await store.set("k", to: 7)
            #expect(try await store.resolve("k", scope: "/org/team").value == 7)
            #expect(try await store.resolve("k", scope: "/org/team").source == .lock("/org"))
        }
    }

    @Test("The highest lock wins over a lower one")
    func highestWins() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1, scope: "/a")
            try await store.set("k", to: 2, scope: "/a/b")
            try await store.lock("k", scope: "/a/b")
            #expect(try await store.resolve("k", scope: "/a/b/c").source == .lock("/a/b"))
            try await store.lock("k", scope: "/a")
            let resolved = try await store.resolve("k", scope: "/a/b/c")
            #expect(resolved.value == 1)
            #expect(resolved.source == .lock("/a"))
            // The lower lock's scope is now below a lock: it cannot be written.
            let error = await #expect(throws: PrefsError.self) { try await store.set("k", to: 3, scope: "/a/b") }
            #expect(error?.code == .locked)
        }
    }

    @Test("Unlock restores scope resolution; unlocking what is not locked changes nothing, like a reset of nothing")
    func unlock() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1, scope: "/a")
            try await store.set("k", to: 2, scope: "/a/b")
            try await store.lock("k", scope: "/a")
            let unlocked = try await store.unlock("k", scope: "/a")
            #expect(unlocked == WriteResult(revision: 4, removed: 1))
            let resolved = try await store.resolve("k", scope: "/a/b")
            #expect(resolved.value == 2)
            #expect(resolved.source == .scope("/a/b"))
            try await store.set("k", to: 3, scope: "/a/b")

            #expect(try await store.unlock("k", scope: "/a") == WriteResult(revision: 5, removed: 0))
            #expect(try await store.unlock("never.locked", scope: .root) == WriteResult(revision: 5, removed: 0))
            #expect(try await store.reset("never.set", scope: .root, recursive: false) == WriteResult(revision: 5, removed: 0))
            // A lock elsewhere is not this one.
            try await store.lock("k", scope: "/a/b")
            #expect(try await store.unlock("k", scope: "/a") == WriteResult(revision: 6, removed: 0))
            #expect(try await store.status().revision == 6)
            #expect(try await store.status().counts.locks == 1)
        }
    }

    @Test("Locking twice at the same scope changes nothing the second time")
    func lockTwice() async throws {
        try await withStore(makeStore()) { store throws in
            #expect(try await store.lock("k", scope: "/a").revision == 1)
            #expect(try await store.lock("k", scope: "/a").revision == 1)
            #expect(try await store.status().counts.locks == 1)
            #expect(try await store.set("k", to: 1, scope: "/a").revision == 2)
        }
    }

    @Test("Locks need valid keys")
    func invalidKey() async throws {
        try await withStore(makeStore()) { store in
            let lock = await #expect(throws: PrefsError.self) { try await store.lock("9k", scope: .root) }
            #expect(lock?.code == .invalidKey)
            let unlock = await #expect(throws: PrefsError.self) { try await store.unlock("9k", scope: .root) }
            #expect(unlock?.code == .invalidKey)
        }
    }
}
