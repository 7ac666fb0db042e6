import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: restart")
struct StoreRestartTests {
    @Test("Values, locks, schemas and the revision survive close and reopen")
    func survives() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path

        let before: PrefsDump
        do {
            let store = try EmbeddedStore(path: path, configuration: .forTests())
            try await store.register(schemas: ["timeline.fontSize": PreferenceSchema(type: .int, defaultValue: 14)])
            try await store.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
            try await store.set("compose.text", to: ["a": [1, "b", 2.5]], scope: "/")
            try await store.set("gone", to: 1)
            try await store.reset("gone", scope: .root, recursive: false)
            try await store.lock("compose.text", scope: "/accounts")
            before = try await store.dump(scope: .root)
            #expect(try await store.status().revision == 6)
            await store.close()
        }

        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { reopened in
            #expect(try await reopened.dump(scope: .root) == before)
            #expect(try await reopened.status().revision == 6)
            let resolved = try await reopened.resolve("compose.text", scope: "/accounts/alice")
            #expect(resolved.value == ["a": [1, "b", 2.5]])
            #expect(resolved.source == .lock("/accounts"))
            #expect(resolved.revision == 6)
            #expect(try await reopened.resolve("timeline.fontSize", scope: "/x").source == .default)
            #expect(try await reopened.resolve("gone").source == .none)
            // Revisions go on from where they were.
            #expect(try await reopened.set("after", to: 1).revision == 7)
        }
    }

    @Test("The change log survives too: a watch after reopening replays changes from before")
    func changeLogSurvives() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        do {
            let store = try EmbeddedStore(path: path, configuration: .forTests())
            try await store.set("k", to: 1)
            try await store.set("k", to: 2, scope: "/a")
            await store.close()
        }
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { reopened in
            var watch = WatchReader(reopened.watch(WatchRequest(keys: ["k"], since: 0)))
            try await reopened.set("k", to: 3)
            let events = try await watch.take(3)
            #expect(events.map(\.summary) == ["1 set k@/=1", "2 set k@/a=2", "3 set k@/=3"])
        }
    }

    @Test("The change log compacts in steps of retainChanges / 32, and its bounds survive reopening")
    func compactionInStepsSurvives() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        let configuration = StoreConfiguration.forTests { $0.retainChanges = 64 }
        do {
            let store = try EmbeddedStore(path: path, configuration: configuration)
            for value in 1...66 { try await store.set("k", to: .integer(Int64(value))) }
            // 64 kept, and 2 (64 / 32) more before a compaction is worth its pages.
            #expect(try await store.status().oldestRevision == 1)
            try await store.set("k", to: 67)
            #expect(try await store.status().oldestRevision == 4)
            try await store.set("k", to: 68)
            #expect(try await store.status().oldestRevision == 4)
            await store.close()
        }
        try await withStore(EmbeddedStore(path: path, configuration: configuration)) { reopened in
            let status = try await reopened.status()
            #expect(status.revision == 68)
            #expect(status.oldestRevision == 4)
            var watch = WatchReader(reopened.watch(WatchRequest(keys: ["k"], since: 3)))
            #expect(try await watch.take(65).map(\.revision) == Array(4...68))
            var tooOld = WatchReader(reopened.watch(WatchRequest(keys: ["k"], since: 2)))
            let (events, error) = await tooOld.rest()
            #expect(events.isEmpty)
            #expect((error as? PrefsError)?.code == .compacted)
            #expect(try await reopened.set("k", to: 69).revision == 69)
        }
    }

    @Test("A closed store refuses writes with shutting_down")
    func closedRefusesWrites() async throws {
        let store = try makeStore()
        try await store.set("k", to: 1)
        await store.close()
        let error = await #expect(throws: PrefsError.self) { try await store.set("k", to: 2) }
        #expect(error?.code == .shuttingDown)
        // Closing twice is harmless.
        await store.close()
    }

    @Test("The temporary store's folder is removed on close")
    func temporaryRemoved() async throws {
        let store = try makeStore()
        let folder = URL(fileURLWithPath: store.path).deletingLastPathComponent()
        try await store.set("k", to: 1)
        #expect(FileManager.default.fileExists(atPath: store.path))
        await store.close()
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
