@testable import PrefsEngine
import PrefsKit
import TestHarness

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
