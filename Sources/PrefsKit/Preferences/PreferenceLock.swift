/// A lock on a key at a scope: `{"key", "scope"}` in a dump, and in a `locked` error, where it
/// names the lock that refused the write.
public struct PreferenceLock: Codable, Sendable, Hashable {
    public var key: String
    public var scope: ScopePath

    public init(key: String, scope: ScopePath) {
        self.key = key
        self.scope = scope
    }
}
