import Foundation
import PrefsClient
import PrefsKit
import PrefsPostgres
import PrefsStore
import TestHarness
import Testing

/// The same scenario against `EmbeddedStore` and against `PrefsClient` talking to a real
/// daemon: the two implementations of `PrefsService` must give identical answers and events.
@Suite struct ServiceConformanceTests {
    /// Everything a scenario observed, to compare between implementations.
    struct Transcript: Equatable {
        var reads: [ResolvedPreference] = []
        var listed: [ResolvedPreference] = []
        var results: [WriteResult] = []
        var errors: [PrefsError.Code] = []
        var dump: PrefsDump?
        var rawEvents: [ChangeEvent] = []
        var scopedEvents: [ChangeEvent] = []
    }

    static func run(_ service: any PrefsService) async throws -> Transcript {
        var transcript = Transcript()
        func attempt(_ body: () async throws -> WriteResult) async {
            do { transcript.results.append(try await body()) } catch let error as PrefsError {
                transcript.errors.append(error.code)
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        await attempt { try await service.register(schemas: ["ui.size": PreferenceSchema(type: .int, defaultValue: 3, minimum: 1, maximum: 9)]) }
        await attempt { try await service.set("ui.size", to: 5, scope: "/accounts/alice") }
        await attempt { try await service.set("ui.size", to: 7) }
        await attempt { try await service.set("ui.size", to: 99) }
        await attempt { try await service.set("ui.theme", to: ["dark", ["contrast": 1.5]], scope: "/accounts") }
        await attempt { try await service.lock("ui.size", scope: "/accounts/bob") }
        await attempt { try await service.set("ui.size", to: 2, scope: "/accounts/bob/threads/1") }
        await attempt { try await service.apply(PreferenceBatch(operations: [.set("ui.a", 1), .set("ui.b", 2, scope: "/x"), .reset("ui.a")])) }
        await attempt { try await service.apply(PreferenceBatch(operations: [.set("ui.c", 1), .set("ui.size", "big")])) }
        await attempt { try await service.reset("ui.size", scope: "/", recursive: true) }
        await attempt { try await service.unlock("ui.size", scope: "/accounts/bob") }
        await attempt { try await service.unlock("ui.size", scope: "/accounts/bob") }
        // Last: a change the scoped watch below sees too, so both watches end on it.
        await attempt { try await service.set("ui.size", to: 8, scope: "/accounts/alice/threads/9") }

        for (key, scope) in [("ui.size", "/accounts/alice/threads/9"), ("ui.size", "/accounts/bob"), ("ui.theme", "/accounts/x"), ("ui.none", "/")] {
            var read = try await service.resolve(key, scope: try ScopePath(scope), explain: true)
            read.revision = 0  // the read's revision is when it was taken; compared separately
            transcript.reads.append(read)
        }
        transcript.listed = try await service.list(scope: "/accounts/alice", prefix: "ui.").map {
            var read = $0
            read.revision = 0
            return read
        }
        transcript.dump = try await service.dump(scope: .root)
        let last = try await service.status().revision
        transcript.rawEvents = try await collect(service.watch(WatchRequest(prefixes: ["ui."], since: 0)), through: last)
        transcript.scopedEvents = try await collect(
            service.watch(WatchRequest(keys: ["ui.size"], scope: "/accounts/alice/threads/9", since: 0)), through: last)
        return transcript
    }

    @Test func embeddedStoreAndDaemonClientAgreeExactly() async throws {
        try await withStore(EmbeddedStore.temporary()) { store in
            let daemon = try await Daemon()

            let embedded = try await Self.run(store)
            let remote = try await Self.run(daemon.client)
            Self.expectAlike(embedded, remote)
            #expect(embedded.errors == [.invalidValue, .locked, .invalidValue])
            #expect(embedded.reads == remote.reads)
            #expect(embedded.listed == remote.listed)
            #expect(embedded.dump == remote.dump)
            #expect(embedded.rawEvents == remote.rawEvents)
            #expect(embedded.scopedEvents == remote.scopedEvents)
            #expect(embedded.rawEvents.map(\.revision) == Array(1...Int64(embedded.rawEvents.count)))
            #expect(embedded.scopedEvents.map(\.value) == [3, 5, 3, 8])
        }
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func embeddedStoreAndPostgresStoreAgreeExactly() async throws {
        try await withPostgresDatabase { database in
            try await withStore(EmbeddedStore.temporary()) { store in
                try await withStore(PostgresStore(url: database.url)) { postgres in
                    let embedded = try await Self.run(store)
                    let shared = try await Self.run(postgres)
                    Self.expectAlike(embedded, shared)
                }
            }
        }
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func embeddedStoreAndADaemonOnPostgresAgreeExactly() async throws {
        try await Daemon.onPostgres { daemon in
            try await withStore(EmbeddedStore.temporary()) { store in
                Self.expectAlike(try await Self.run(store), try await Self.run(daemon.client))
            }
        }
    }

    /// Expects two transcripts of ``run(_:)`` to agree in every part.
    static func expectAlike(_ one: Transcript, _ other: Transcript, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(one.results == other.results, sourceLocation: sourceLocation)
        #expect(one.errors == other.errors, sourceLocation: sourceLocation)
        #expect(one.reads == other.reads, sourceLocation: sourceLocation)
        #expect(one.listed == other.listed, sourceLocation: sourceLocation)
        #expect(one.dump == other.dump, sourceLocation: sourceLocation)
        #expect(one.rawEvents == other.rawEvents, sourceLocation: sourceLocation)
        #expect(one.scopedEvents == other.scopedEvents, sourceLocation: sourceLocation)
    }
}
