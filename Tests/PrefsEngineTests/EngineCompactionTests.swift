import PrefsEngine
import PrefsKit
import Testing

/// The change log compacted: the engine keeps `retainChanges` changes, and what reaches back
/// past the oldest it keeps — a read in the past, a watch resumed — is `compacted`; the changes
/// that set what is stored now still explain it.
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

    @Test("A watch resumed from before the oldest revision kept is compacted")
    func watchResumed() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
            try await Self.writeForty(engine)
            let error = await #expect(throws: PrefsError.self) {
                for try await _ in engine.watch(WatchRequest(since: 7)) { break }
            }
            #expect(error?.code == .compacted)
            #expect(error?.oldestRevision == 9)
        }
    }

    @Test("A history reaches back to the oldest change kept, and to an older one that set what is stored now")
    func history() async throws {
        try await withEngine(on: SharedMemoryStorage(), configuration: Self.keeping32) { engine in
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
