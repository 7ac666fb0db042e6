import PrefsEngine
import PrefsKit
import TestHarness
import Testing

/// The change log compacted: the engine keeps `retainChanges` changes, and what reaches back
/// past the oldest it keeps — a read in the past, a watch resumed — is `compacted`; the changes
/// that set what is stored now still explain it. A watch resumed, or a device whose cursor is
/// that old, is `compacted` (a snapshot, for a device) only if compaction dropped a change it
/// follows: else the log still holds all of them.
@Suite("Engine: change-log compaction")
struct EngineCompactionTests {
    /// Keeps 32 changes, dropping older ones one at a time (a 32nd of them).
    private static let keeping32 = {
        var configuration = StoreConfiguration()
        configuration.retainChanges = 32
        return configuration
    }()

    /// Sets `early` once (revision 1), then `k0` to `k3` in turn to 2…40: `kN` to the revisions
    /// `N` mod 4 — compacting the log to revisions 9…40, with `early`'s change kept below them.
    private static func writeForty(_ engine: some PrefsService) async throws {
        try await engine.set("early", to: "first")
        for revision in 2...40 {
            try await engine.set("k\(revision % 4)", to: .integer(Int64(revision)))
        }
    }

    @Test("The log keeps the 32 newest changes")
    func oldestKept() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeForty(engine)
            let status = try await engine.status()
            #expect(status.revision == 40)
            #expect(status.oldestRevision == 9)
        }
    }

    @Test("Reads at a revision before the oldest kept are compacted; from the one before it on, they are read")
    func readsInThePast() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeForty(engine)
            let key = try KeyName("k1")
            for revision: Revision in [0, 1, 7] {
                let error = await #expect(throws: PrefsError.self) {
                    try await engine.resolve(key, scope: .root, explain: false, atRevision: revision)
                }
                #expect(error?.code == .compacted, "at \(revision)")
                #expect(error?.oldestRevision == 9, "at \(revision)")
            }
            await #expect(throws: PrefsError.self) { try await engine.list(scope: .root, prefix: nil, atRevision: 7) }
            await #expect(throws: PrefsError.self) { try await engine.diff(from: 7, to: nil, scope: .root, prefix: nil) }
            #expect(try await engine.resolve(key, scope: .root, explain: false, atRevision: 8).value == 5)
            #expect(try await engine.resolve(key, scope: .root, explain: false, atRevision: 9).value == 9)
        }
    }

    @Test("A watch resumed from before the oldest revision kept is compacted if compaction dropped a change it follows")
    func watchResumed() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeForty(engine)
            // k0's change 8 was dropped (k1's last dropped was 5: a watch of it resumes from 7).
            for request in [WatchRequest(since: 7), WatchRequest(keys: ["k0"], since: 7), WatchRequest(prefixes: ["k"], since: 7)] {
                let error = await #expect(throws: PrefsError.self) {
                    for try await _ in engine.watch(request) { break }
                }
                #expect(error?.code == .compacted, "\(request)")
                #expect(error?.oldestRevision == 9, "\(request)")
            }
            let k1 = try await collect(engine.watch(WatchRequest(keys: ["k1"], since: 7)), count: 8)
            #expect(k1.map(\.revision) == Array(stride(from: 9, through: 37, by: 4)))
        }
    }

    /// Sets `a` at /accounts/x (revision 1, kept: it is stored now) and `b` at / 2…30, `a` at /
    /// at 31, `b` again 32…40: the log is compacted to 9…40, dropping `b`'s changes 2…8 only.
    private static func writeAroundA(_ engine: some PrefsService, aAlsoAt: Revision? = nil) async throws {
        try await engine.set("a", to: "kept", scope: "/accounts/x")
        for revision: Int64 in 2...40 {
            if revision == 31 || revision == aAlsoAt {
                try await engine.set("a", to: .integer(revision))
            } else {
                try await engine.set("b", to: .integer(revision))
            }
        }
    }

    @Test("A watch of a key resumed from before the oldest revision kept replays every later change of it when only other keys' were dropped")
    func watchOfAKeyWhoseChangesWereKept() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeAroundA(engine)
            #expect(try await engine.status().oldestRevision == 9)
            // Subscribed now: the changes after them are held back until their replays are sent.
            let (keyWatch, prefixWatch) = (engine.watch(WatchRequest(keys: ["a"], since: 0)), engine.watch(WatchRequest(prefixes: ["a"], since: 0)))
            let resumed = Task { try await collect(keyWatch, through: 42) }
            let prefixed = Task { try await collect(prefixWatch, through: 42) }
            try await engine.set("b", to: 0)
            try await engine.set("a", to: "live")
            for events in [try await resumed.value, try await prefixed.value] {
                #expect(events.map(\.revision) == [1, 31, 42], "the change kept below the log's oldest, the later one, then live")
                #expect(events.map(\.value) == ["kept", 31, "live"])
            }
            // Its scoped watch follows / and above it, where nothing of `a` was dropped.
            let scoped = try await collect(engine.watch(WatchRequest(keys: ["a"], scope: "/accounts/y", since: 0)), count: 1)
            #expect(scoped.map(\.revision) == [31])
            let error = await #expect(throws: PrefsError.self) {
                for try await _ in engine.watch(WatchRequest(keys: ["a", "b"], since: 0)) { break }
            }
            #expect(error?.code == .compacted, "b's changes were dropped")
        }
    }

    @Test("A watch of a key resumed from before a change of it compaction dropped is compacted; from that change on, it replays")
    func watchOfAKeyWhoseChangeWasDropped() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeAroundA(engine, aAlsoAt: 5)
            #expect(try await engine.status().oldestRevision == 9)
            for since: Revision in [0, 4] {
                let error = await #expect(throws: PrefsError.self) {
                    for try await _ in engine.watch(WatchRequest(keys: ["a"], since: since)) { break }
                }
                #expect(error?.code == .compacted, "from \(since)")
                #expect(error?.oldestRevision == 9)
            }
            let scoped = await #expect(throws: PrefsError.self) {
                for try await _ in engine.watch(WatchRequest(keys: ["a"], scope: "/accounts/y", since: 4)) { break }
            }
            #expect(scoped?.code == .compacted)
            let resumed = try await collect(engine.watch(WatchRequest(keys: ["a"], since: 5)), count: 1)
            #expect(resumed.map(\.revision) == [31], "nothing of a's dropped after 5")
        }
    }

    /// An engine with the token `laptop`, a writer at /accounts/alice (revision 1), that set `p`
    /// there (2), then `q` at /accounts/bob 3…40 but `p` again at 20 and 30, and at `pAlsoAt` —
    /// compacting the log to 9…40.
    private static func withReplicaUpstream(pAlsoAt: Revision? = nil, _ body: (PrefsEngine<SharedMemoryStorage>) async throws -> Void)
        async throws
    {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            _ = try await engine.createToken(named: "laptop", role: .writer, scope: "/accounts/alice")
            try await engine.set("p", to: 2, scope: "/accounts/alice")
            for revision: Int64 in 3...40 {
                if [20, 30, pAlsoAt].contains(revision) {
                    try await engine.set("p", to: .integer(revision), scope: "/accounts/alice")
                } else {
                    try await engine.set("q", to: .integer(revision), scope: "/accounts/bob")
                }
            }
            #expect(try await engine.status().oldestRevision == 9)
            try await body(engine)
        }
    }

    private static let laptop = AccessGrant(token: "laptop", role: .writer, scope: "/accounts/alice")

    @Test("A device whose cursor is older than the log gets the changes within its reach, not a snapshot, when compaction dropped none of them")
    func replicaBehindTheLogGetsChanges() async throws {
        try await Self.withReplicaUpstream { engine in
            let answer = try await engine.exchange(SyncRequest(cursor: 2), grant: Self.laptop, context: WriteContext())
            #expect(answer.snapshot == nil)
            #expect(answer.changes.map(\.revision) == [20, 30])
            #expect(answer.changes.map(\.value) == [20, 30])
            #expect(answer.cursor == 40)
        }
    }

    @Test("A device whose cursor is older than a change within its reach that compaction dropped gets a snapshot")
    func replicaBehindADroppedChangeGetsASnapshot() async throws {
        try await Self.withReplicaUpstream(pAlsoAt: 5) { engine in
            let answer = try await engine.exchange(SyncRequest(cursor: 2), grant: Self.laptop, context: WriteContext())
            #expect(answer.snapshot?.revision == 40)
            #expect(answer.snapshot?.values.map(\.value) == [30])
            #expect(answer.changes.isEmpty)
            #expect(answer.cursor == 40)
            let later = try await engine.exchange(SyncRequest(cursor: 5), grant: Self.laptop, context: WriteContext())
            #expect(later.snapshot == nil, "from the dropped change on, nothing within its reach was dropped")
            #expect(later.changes.map(\.revision) == [20, 30])
        }
    }

    @Test("A watch a scoped token opened, resumed from before the log, replays when only changes outside its reach were dropped")
    func watchOfAScopedToken() async throws {
        try await Self.withReplicaUpstream { engine in
            var request = WatchRequest(since: 2)
            request.grant = Self.laptop
            let events = try await collect(engine.watch(request), count: 2)
            #expect(events.map(\.revision) == [20, 30], "q's changes at /accounts/bob are not its to see, nor to lose")
        }
    }

    @Test("A history reaches back to the oldest change kept, and to an older one that set what is stored now", arguments: [true, false])
    func history(indexed: Bool) async throws {
        try await withEngine(on: SharedMemoryStorage(), indexed: indexed, configuration: Self.keeping32) { engine in
            try await Self.writeForty(engine)
            let changed = try await engine.history(of: "k1")
            #expect(changed.steps.map(\.change.revision) == Array(stride(from: 37, through: 9, by: -4)))
            #expect(changed.oldestRevision == 9)
            let early = try await engine.history(of: "early")
            #expect(early.steps.map(\.change.revision) == [1])
            #expect(early.steps.map(\.value) == ["first"])
        }
    }
}
