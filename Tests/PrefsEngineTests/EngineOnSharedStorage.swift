@testable import PrefsEngine
import PrefsKit
import Synchronization
import TestHarness
import Testing

/// Runs `body` with an engine over `storage`, configured as `configuration`, whose short waits
/// `clock` measures, and closes the engine afterwards, whether `body` threw or not.
func withEngine<T>(
    on storage: SharedMemoryStorage, configuration: StoreConfiguration = StoreConfiguration(), clock: ManualClock = ManualClock(),
    _ body: (PrefsEngine<SharedMemoryStorage>) async throws -> T
) async throws -> T {
    let engine = try PrefsEngine(storage: storage, configuration: configuration, clock: clock)
    do {
        let result = try await body(engine)
        await engine.close()
        return result
    } catch {
        await engine.close()
        throw error
    }
}

/// Runs `body` with an engine over `storage` whose key index is built before `body` runs
/// (`indexed`), or cannot be built, so that its readers of a key's changes read the log from its
/// newest end: the two ways must answer alike.
func withEngine<T>(
    on storage: SharedMemoryStorage, indexed: Bool, configuration: StoreConfiguration = StoreConfiguration(),
    _ body: (PrefsEngine<SharedMemoryStorage>) async throws -> T
) async throws -> T {
    storage.refusesKeyIndex.withLock { $0 = !indexed }
    return try await withEngine(on: storage, configuration: configuration) { engine in
        #expect(await engine.keyIndexRebuilt() == indexed)
        return try await body(engine)
    }
}
