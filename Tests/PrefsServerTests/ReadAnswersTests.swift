import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``ReadAnswers``: its memo answers as rendering afresh would, and never from before a commit.
@Suite struct ReadAnswersTests {
    @Test func answersAsRenderingAfreshWouldAndNeverFromBeforeACommit() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let reads = ReadAnswers(store: store)
            let path = "/v1/prefs/k.v?scope=/accounts/alice"
            for value in 1...20 {
                // The key itself, then another key: both change the answer (its revision).
                try await store.set(value.isMultiple(of: 2) ? "k.v" : "other.key", to: .integer(Int64(value)))
                let fresh = try #require(CachedRead.body(forPath: path, from: store))
                for _ in 0..<3 {
                    #expect(reads.answer(toPath: path, connection: ConnectionOptions(nil))?.body == fresh)
                }
                #expect(fresh.contains(#""revision":\#(value)"#))
            }
            #expect(reads.answer(toPath: path, connection: ConnectionOptions("Close"))?.close == true)
            #expect(reads.answer(toPath: path, connection: ConnectionOptions("keep-alive"))?.close == false)
            #expect(reads.answer(toPath: "/v1/prefs/Not%20A%20Key", connection: ConnectionOptions(nil)) == nil)
        }
    }

    @Test func startsOverPastItsCapacity() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let reads = ReadAnswers(store: store)
            for index in 0...ReadAnswers.capacity {
                #expect(reads.answer(toPath: "/v1/prefs/k\(index)", connection: ConnectionOptions(nil)) != nil)
            }
            #expect(reads.memoCount == 1)
        }
    }
}
