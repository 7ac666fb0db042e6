import Foundation
import PrefsEngine
import PrefsKit
@testable import PrefsStore
import TestHarness
import Testing

@Suite("Store: one owner per database")
struct StoreOwnershipTests {
    @Test("A second store on the same file fails with conflict, naming the owner's pid")
    func secondStoreRefused() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { first in
            try await first.set("k", to: 1)

            let error = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, configuration: .forTests()) }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("pid \(getpid())") == true)
            #expect(error?.message.contains(path) == true)

            // The owner is not disturbed.
            try await first.set("k", to: 2)
            #expect(try await first.resolve("k").value == 2)
            #expect(try await first.status().pid == getpid())
        }
    }

    @Test("A claim this process gave up, whose lock a copied descriptor still holds for a moment, is waited for")
    func lingeringOwnClaimIsWaitedFor() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        // As a child being spawned holds a copy of a released claim's descriptor until it execs:
        // the lock is held under this process's pid, and let go a moment later.
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        _ = "\(getpid())\n".withCString { pwrite(lock, $0, strlen($0), 0) }
        // The claimant finds the lock held, pauses — and meanwhile the copy lets go.
        var pauses = 0
        let claim = try DatabaseOwnership(databasePath: path) {
            pauses += 1
            if pauses == 1 { close(lock) }
        }
        #expect(pauses == 1, "the claim was waited for, once")
        claim.release()
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { store in
            try await store.set("k", to: 1)
            #expect(try await store.status().pid == getpid())
        }
    }

    @Test("Different files can be open at once")
    func differentFiles() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        try await withStore(EmbeddedStore(path: folder.appending(path: "one.sqlite").path, configuration: .forTests())) { one in
            try await withStore(EmbeddedStore(path: folder.appending(path: "two.sqlite").path, configuration: .forTests())) { two in
                try await one.set("k", to: 1)
                try await two.set("k", to: 2)
                #expect(try await one.resolve("k").value == 1)
                #expect(try await two.resolve("k").value == 2)
            }
        }
    }

    @Test("Once the owner is gone, the database can be opened again")
    func reopenAfterOwnerGone() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        do {
            let first = try EmbeddedStore(path: path, configuration: .forTests())
            try await first.set("k", to: 1)
            await first.close()
        }
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { second throws in
            #expect(try await second.resolve("k").value == 1)
        }
    }
}

@Suite("Store: close releases the database")
struct StoreCloseReleasesTests {
    @Test("A store dropped without close() releases its database by itself, its writes kept")
    func droppedStoreReleases() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        do {
            let first = try EmbeddedStore(path: path, configuration: .forTests())
            try await first.set("k", to: 1)
        }
        // Its deinit waits for nothing: the storage is released on a thread of its own.
        var second: EmbeddedStore?
        try await waitUntil("the dropped store released the database") {
            second = try? EmbeddedStore(path: path, configuration: .forTests())
            return second != nil
        }
        let reopened = try #require(second)
        try await withStore(reopened) { store throws in
            #expect(try await store.resolve("k").value == 1)
        }
    }

    @Test("After close(), the database can be opened again while the old store object still lives")
    func closeReleases() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        let first = try EmbeddedStore(path: path, configuration: .forTests())
        try await first.set("k", to: 1)
        await first.close()
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { second throws in
            #expect(try await second.resolve("k").value == 1)
    
            withExtendedLifetime(first) {}
        }
    }
}
