/// A key at one scope as stored there — its value and lock at that very scope, not inherited
/// ones — and its revision there: what a `stale_revision` error of a conditional preference
/// write carries (`currentPreference`), to base the change on.
public struct ScopedPreference: Codable, Sendable, Hashable {
    /// The key.
    public var key: String
    /// The scope.
    public var scope: ScopePath
    /// The key's revision at the scope (`KeyState/revision(at:)`); 0 when nothing is set or
    /// locked there.
    public var revision: Revision
    /// The value set at the scope; nil (absent on the wire) when none is.
    public var value: JSONValue?
    /// Whether the key is locked at the scope.
    public var locked: Bool

    /// `key` at `scope` as `state` holds it (nil: nothing stored for the key).
    package init(key: String, scope: ScopePath, state: KeyState?) {
        self.key = key
        self.scope = scope
        revision = state?.revision(at: scope) ?? 0
        value = state?.values[scope]?.value
        locked = state?.locks[scope] != nil
    }
}
