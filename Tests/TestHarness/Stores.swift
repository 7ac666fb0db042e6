import PrefsStore

/// Runs `body` with `store`, then closes the store with `closeWithoutBlocking()` — also when
/// `body` throws, whose error is then rethrown.
public func withStore<T>(
    _ store: EmbeddedStore, isolation: isolated (any Actor)? = #isolation, _ body: (EmbeddedStore) async throws -> T
) async throws -> T {
    try await withCleanup(isolation: isolation) { try await body(store) } cleanup: { await store.closeWithoutBlocking() }
}
