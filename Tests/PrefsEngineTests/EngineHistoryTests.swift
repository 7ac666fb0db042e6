import PrefsEngine
import PrefsKit
import TestHarness
import Testing

/// What the engine makes of its change log: a key's history at a scope, the store read as it was
/// at a revision (`prefsctl get --at`), and a revert — on the in-memory storage, through the
/// service's API.
@Suite("Engine: history, reads in the past, revert")
struct EngineHistoryTests {
    /// `ui.size` at `/accounts/alice` over five revisions: set at `/` (1), set for alice (2),
    /// another key (3), set at `/` under alice's value (4), alice's reset (5).
    private static func writeHistory(_ engine: some PrefsService) async throws {
        try await engine.set("ui.size", to: 12, reason: "first")
        try await engine.set("ui.size", to: 14, scope: "/accounts/alice", reason: "alice's")
        try await engine.set("other.key", to: 1, reason: "another key")
        try await engine.set("ui.size", to: 16, reason: "bigger")
        try await engine.reset("ui.size", scope: "/accounts/alice", reason: "back to everyone's")
    }

    @Test("A key's history at a scope holds the changes of its value there, newest first, with their reasons", arguments: [true, false])
    func steps(indexed: Bool) async throws {
        try await withEngine(on: SharedMemoryStorage(), indexed: indexed) { engine in
            try await Self.writeHistory(engine)
            let history = try await engine.history(of: "ui.size", scope: "/accounts/alice")
            // Revision 3 is another key's; 4 changed `/` under alice's own value.
            #expect(history.steps.map(\.change.revision) == [5, 2, 1])
            #expect(history.steps.map(\.value) == [16, 14, 12])
            #expect(history.steps.map(\.source) == [.scope(.root), .scope("/accounts/alice"), .scope(.root)])
            #expect(history.steps.map(\.previousValue) == [14, 12, nil])
            #expect(history.steps.map(\.change.reason) == ["back to everyone's", "alice's", "first"])
            #expect(history.current.value == 16)
            #expect(history.next == nil)
        }
    }

    @Test("A history is read in pages: each ends where the next one starts", arguments: [true, false])
    func pages(indexed: Bool) async throws {
        try await withEngine(on: SharedMemoryStorage(), indexed: indexed) { engine in
            try await Self.writeHistory(engine)
            let key = try KeyName("ui.size")
            let first = try await engine.history(of: key, scope: "/accounts/alice", limit: 2, before: nil)
            #expect(first.steps.map(\.change.revision) == [5, 2])
            #expect(first.next == 2)
            let second = try await engine.history(of: key, scope: "/accounts/alice", limit: 2, before: first.next)
            #expect(second.steps.map(\.change.revision) == [1])
            #expect(second.next == nil)
        }
    }

    @Test("The store read at each revision holds what was stored then", arguments: [true, false])
    func readsInThePast(indexed: Bool) async throws {
        try await withEngine(on: SharedMemoryStorage(), indexed: indexed) { engine in
            try await Self.writeHistory(engine)
            let key = try KeyName("ui.size")
            var values: [JSONValue] = []
            for revision in Revision(0)...5 {
                values.append(try await engine.resolve(key, scope: "/accounts/alice", explain: false, atRevision: revision).value)
            }
            #expect(values == [.null, 12, 14, 14, 14, 16])
            #expect(try await engine.list(scope: .root, prefix: nil, atRevision: 2).map(\.key) == ["ui.size"])
            #expect(try await engine.list(scope: .root, prefix: nil, atRevision: 3).map(\.key) == ["other.key", "ui.size"])
        }
    }

    @Test("A revert puts back what the key held at a scope then, as a new change that says so", arguments: [true, false])
    func revert(indexed: Bool) async throws {
        try await withEngine(on: SharedMemoryStorage(), indexed: indexed) { engine in
            try await Self.writeHistory(engine)
            let reverted = try await engine.withReason("alice wants hers") {
                try await engine.revert("ui.size", scope: "/accounts/alice", to: 2)
            }
            #expect(reverted.revision == 6)
            #expect(try await engine.resolve("ui.size", scope: "/accounts/alice").value == 14)
            #expect(try await engine.resolve("ui.size", scope: .root).value == 16, "`/` is not reverted")
            let step = try #require(try await engine.history(of: "ui.size", scope: "/accounts/alice").steps.first)
            #expect(step.change.revision == 6)
            #expect(step.change.reason == "alice wants hers (revert of 'ui.size' at /accounts/alice to revision 2)")
        }
    }

    @Test("A revert from a revision the key has left is refused, and changes nothing")
    func staleRevert() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            try await Self.writeHistory(engine)
            let error = await #expect(throws: PrefsError.self) {
                try await engine.revert("ui.size", scope: "/accounts/alice", to: 2, ifRevision: 2)
            }
            #expect(error?.code == .staleRevision)
            #expect(try await engine.status().revision == 5)
            #expect(try await engine.resolve("ui.size", scope: "/accounts/alice").value == 16)
        }
    }

    @Test("Once the key index is built, a key's history and its past are read by the key's revisions, however far back they are", arguments: [true, false])
    func indexedReadsByRevision(indexed: Bool) async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage, indexed: indexed) { engine in
            try await engine.set("rare", to: "once", reason: "long ago")
            for index in 0..<300 { try await engine.set("busy.k\(index % 7)", to: .integer(Int64(index))) }
            let history = try await engine.history(of: "rare", scope: .root)
            #expect(history.steps.map(\.change.revision) == [1])
            #expect(history.steps.map(\.change.reason) == ["long ago"])
            #expect(try await engine.resolve(KeyName("rare"), scope: .root, explain: false, atRevision: 2).value == "once")
            #expect(try await engine.resolve(KeyName("rare"), scope: .root, explain: false, atRevision: 0).value == .null)
            // The history's read and each past's: each names the key's revisions, or none without the index.
            #expect(storage.readsByRevision.count == (indexed ? 3 : 0))
        }
    }

    @Test("An engine opening on a log rebuilds the key index from it, and adds what is written after")
    func indexRebuiltOnOpening() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage, indexed: true) { engine in try await Self.writeHistory(engine) }
        try await withEngine(on: storage, indexed: true) { engine in
            try await engine.set("ui.size", to: 18, scope: "/accounts/alice", reason: "after reopening")
            let history = try await engine.history(of: "ui.size", scope: "/accounts/alice")
            #expect(history.steps.map(\.change.revision) == [6, 5, 2, 1])
            #expect(history.steps.map(\.value) == [18, 16, 14, 12])
        }
    }

    @Test(
        "A change another host's compaction kept, which this host has seen replaced since, stays in the key's history",
        arguments: [true, false])
    func keptByAnotherHostsCompaction(indexed: Bool) async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage, indexed: indexed) { engine in
            try await engine.set("k", to: 1)
            storage.othersCommit([("x", 2), ("x", 3), ("x", 4), ("x", 5)])
            try await engine.set("y", to: 6)
            // Another host compacts to 6, keeping `k`'s 1 (stored then) and `x`'s 5, then
            // replaces `k`: the log holds 1, 5, 6 and 7 until the next compaction.
            storage.othersCompact(keepingFrom: 6)
            storage.othersCommit([("k", 2)])
            // This host takes both in at once, as its next batch begins: its cache has `k` at 7.
            try await engine.set("z", to: 8)
            await engine.keyIndexSettled()
            let history = try await engine.history(of: "k", scope: .root)
            #expect(history.steps.map(\.change.revision) == [7, 1])
            #expect(history.steps.map(\.value) == [2, 1])
        }
    }
}

