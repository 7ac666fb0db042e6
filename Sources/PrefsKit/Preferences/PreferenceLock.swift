/// A lock on a key at a scope: `{"key", "scope"}` in a dump, and in a `locked` error, where it
/// names the lock that refused the write.
public struct PreferenceLock: Codable, Sendable, Hashable {
    /// The locked key.
    public var key: String
    /// The scope it is locked at.
    public var scope: ScopePath

    /// The lock on `key` at `scope`.
    public init(key: String, scope: ScopePath) {
        self.key = key
        self.scope = scope
    }
}
