import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: group commit", .timeLimit(.minutes(5)))
struct GroupCommitTests {
    @Test("200 concurrent sets: distinct revisions, exactly 1...200, every value readable")
    func concurrentSets() async throws {
        try await withStore(makeStore()) { store in
            let results = try await withThrowingTaskGroup(of: (Int, Revision).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let scope = try ScopePath("/s/\(index % 7)")
                        let result = try await store.set("key.n\(index)", to: .integer(Int64(index)), scope: scope)
                        return (index, result.revision)
                    }
                }
                var results: [Int: Revision] = [:]
                for try await (index, revision) in group { results[index] = revision }
                return results
            }
            #expect(results.count == 200)
            #expect(Set(results.values) == Set(1...200))
            #expect(try await store.status().revision == 200)
            for index in 0..<200 {
                let resolved = try await store.resolve("key.n\(index)", scope: try ScopePath("/s/\(index % 7)"), explain: true)
                #expect(resolved.value == .integer(Int64(index)))
                // The revision the writer was told is the one the value is stored with.
                #expect(resolved.chain?.first?.revision == results[index])
            }

            // The change log has one entry per revision, matching what each writer was told.
            var watch = WatchReader(store.watch(WatchRequest(since: 0)))
            let events = try await watch.take(200)
            #expect(events.map(\.revision) == Array(1...200))
            for event in events {
                guard let key = event.key, let index = Int(key.dropFirst("key.n".count)) else {
                    Issue.record("unexpected event \(event)")
                    continue
                }
                #expect(results[index] == event.revision)
                #expect(event.value == .integer(Int64(index)))
            }
        }
    }

    @Test("Concurrent sets of one key: the value left is the one with the highest revision")
    func sameKey() async throws {
        try await withStore(makeStore()) { store in
            let results = try await withThrowingTaskGroup(of: (Int64, Revision).self) { group in
                for value in 0..<50 as Range<Int64> {
                    group.addTask { (value, try await store.set("shared", to: .integer(value)).revision) }
                }
                var results: [(Int64, Revision)] = []
                for try await result in group { results.append(result) }
                return results
            }
            let last = try #require(results.max { $0.1 < $1.1 })
            #expect(last.1 == 50)
            #expect(try await store.resolve("shared").value == .integer(last.0))
        }
    }

    @Test("Batches that fail inside a concurrent group do not affect the others")
    func failingBatchesIsolated() async throws {
        try await withStore(makeStore()) { store in
            try await store.lock("locked", scope: "/top")  // 1

            enum Outcome: Sendable {
                case committed(index: Int, revisions: [Revision])
                case refused(index: Int, code: PrefsError.Code?)
            }
            let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
                for index in 0..<120 {
                    group.addTask {
                        let failing = index % 4 == 0
                        let operations: [PreferenceOperation] =
                            failing
                            ? [.set("bad.a\(index)", 1), .set("locked", 2, scope: "/top/below"), .set("bad.b\(index)", 3)]
                            : [.set("good.a\(index)", .integer(Int64(index))), .set("good.b\(index)", .integer(Int64(index)))]
                        do {
                            let result = try await store.apply(PreferenceBatch(operations: operations))
                            return .committed(index: index, revisions: result.revisions ?? [])
                        } catch let error as PrefsError {
                            return .refused(index: index, code: error.code)
                        } catch {
                            return .refused(index: index, code: nil)
                        }
                    }
                }
                var outcomes: [Outcome] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }

            var revisions: [Revision] = []
            for outcome in outcomes {
                switch outcome {
                case .committed(let index, let batchRevisions):
                    #expect(index % 4 != 0, "batch \(index) should have failed")
                    #expect(batchRevisions.count == 2)
                    #expect(batchRevisions.last.map { $0 - batchRevisions[0] } == 1, "a batch's revisions are consecutive")
                    revisions += batchRevisions
                case .refused(let index, let code):
                    #expect(index % 4 == 0, "batch \(index) should have committed")
                    #expect(code == .locked)
                }
            }
            // 90 good batches of 2: revisions 2...181, each used once; the failed ones used none.
            #expect(revisions.sorted() == Array(2...181))
            #expect(try await store.status().revision == 181)
            for index in 0..<120 {
                if index % 4 == 0 {
                    #expect(try await store.resolve("bad.a\(index)").source == .none)
                    #expect(try await store.resolve("bad.b\(index)").source == .none)
                } else {
                    #expect(try await store.resolve("good.a\(index)").value == .integer(Int64(index)))
                    #expect(try await store.resolve("good.b\(index)").value == .integer(Int64(index)))
                }
            }
            // Rolled back in the database too, not only in the cache: a failed batch's first
            // write, made before its second failed, is not in the file.
            let stored = try await sqlite3(store.path, "SELECT count(*) FROM preference WHERE key LIKE 'bad.%'; SELECT count(*) FROM change WHERE key LIKE 'bad.%'")
            #expect(stored.split(separator: "\n") == ["0", "0"])
        }
    }

    @Test("A write is visible to reads as soon as it returns")
    func readYourWrites() async throws {
        try await withStore(makeStore()) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let written = try await store.set("ryw.k\(index)", to: .integer(Int64(index)))
                        let read = try await store.resolve("ryw.k\(index)")
                        #expect(read.value == .integer(Int64(index)))
                        #expect(read.revision >= written.revision)
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("Commits reach the database file itself soon after, without a request waiting for it")
    func checkpointsAfterAnswering() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k.v", to: "in the file", scope: "/")
            // Read the main file alone (`immutable`: no WAL): the value is there once the
            // writer has checkpointed — SQLite's auto-checkpoint would wait for 1000 pages.
            let file = "file:\(store.path)?immutable=1"
            try await waitUntil("the value is in the main file") {
                let found = try? await sqlite3(file, "SELECT value FROM preference WHERE key = 'k.v'")
                return found == #""in the file""#
            }
        }
    }
}
