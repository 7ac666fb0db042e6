import PrefsEngine
import PrefsStore

/// Runs `body` with `store`, then closes the store with `close()` — also when
/// `body` throws, whose error is then rethrown.
public func withStore<Storage, T>(
    _ store: PrefsEngine<Storage>, isolation: isolated (any Actor)? = #isolation,
    _ body: (PrefsEngine<Storage>) async throws -> T
) async throws -> T {
    try await withCleanup(isolation: isolation) { try await body(store) } cleanup: { await store.close() }
}
