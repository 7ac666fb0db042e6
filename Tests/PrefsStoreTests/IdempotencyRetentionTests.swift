import Foundation
@testable import PrefsEngine
import PrefsKit
@testable import PrefsStore
import Synchronization
import TestHarness
import Testing

/// A key's stored outcome is kept for the retention, measured on the engine's wall clock, and
/// then pruned by a later commit: the same key then names a new request. The clock is set by
/// hand, so nothing waits for the time to pass.
@Suite("Store: idempotent requests' retention")
struct IdempotencyRetentionTests {
    /// A wall clock that stands still until the test moves it.
    final class HandSetTime: Sendable {
        private let seconds = Mutex(1_800_000_000.0)
        var clock: WallClock { WallClock { self.seconds.withLock { $0 } } }
        func advance(by duration: Double) { seconds.withLock { $0 += duration } }
    }

    @Test("A key is remembered within the retention and forgotten after it")
    func aKeyExpiresAfterTheRetention() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let time = HandSetTime()
        let configuration = StoreConfiguration.forTests { $0.idempotencyRetention = .seconds(60) }
        let storage = try SQLiteStorage(path: folder.appending(path: "prefs.sqlite").path, durability: configuration.durability)
        let store = try PrefsEngine(storage: storage, configuration: configuration, wallClock: time.clock)
        let key = try KeyName("idem.a")
        func set(_ value: JSONValue, fingerprint: String) async throws -> WriteResult {
            let request = try IdempotentRequest(key: "k-old", fingerprint: fingerprint)
            return try await store.set(key, to: value, scope: .root, ifRevision: nil, context: WriteContext(idempotency: request))
        }
        try await withStore(store) { store in
            #expect(try await set(1, fingerprint: "first").revision == 1)
            await #expect(throws: PrefsError.self) { try await set(2, fingerprint: "second") }

            time.advance(by: 59)
            try await store.set("idem.other", to: 1)        // a commit that prunes what is due
            let refused = await #expect(throws: PrefsError.self) { try await set(2, fingerprint: "second") }
            #expect(refused?.code == .idempotencyKeyReused, "still within the retention")

            time.advance(by: 2)
            try await store.set("idem.other", to: 2)
            #expect(try await set(2, fingerprint: "second").revision == 4, "a new request under a forgotten key")
            #expect(try await store.resolve("idem.a").value == 2)
        }
    }
}
