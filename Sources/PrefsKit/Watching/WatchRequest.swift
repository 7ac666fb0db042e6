import Foundation

/// What a watch asks to be told about (`GET /v1/watch?…`, `prefsctl watch`).
///
/// Keys and prefixes select preference keys (none of either: every key). With a ``scope``, the
/// watch follows the *effective* value of those keys at that scope: it is woken only when that
/// value changes, and its events carry the new value and source.
public struct WatchRequest: Sendable, Hashable {
    /// Exact key names.
    public var keys: [String]
    /// Key prefixes (string prefixes: `timeline.` matches `timeline.fontSize`).
    public var prefixes: [String]
    /// Follow effective values at this scope, rather than every raw change.
    public var scope: ScopePath?
    /// Replay every matching change after this revision first.
    public var since: Revision?
    /// One draft: its changes, its attachments', and changes of its validation.
    public var draft: UUID?
    /// Every draft of one thread.
    public var thread: String?
    /// Every draft of one account.
    public var account: String?
    /// Who opened it, when the daemon's token scope bounds what it may see: only changes at or
    /// below the grant's scope (and the drafts of accounts there), and an end with a `revoked`
    /// event when its token is revoked.
    package var grant: AccessGrant?

    /// A watch of what these fields select; by default, every change of every key.
    ///
    /// - Parameters:
    ///   - keys: Exact key names.
    ///   - prefixes: Key prefixes (string prefixes: `timeline.` matches `timeline.fontSize`).
    ///   - scope: Follow effective values at this scope, rather than every raw change.
    ///   - since: Replay every matching change after this revision first.
    ///   - draft: One draft: its changes, its attachments', and changes of its validation.
    ///   - thread: Every draft of one thread.
    ///   - account: Every draft of one account.
    public init(
        keys: [String] = [], prefixes: [String] = [], scope: ScopePath? = nil, since: Revision? = nil,
        draft: UUID? = nil, thread: String? = nil, account: String? = nil
    ) {
        self.keys = keys
        self.prefixes = prefixes
        self.scope = scope
        self.since = since
        self.draft = draft
        self.thread = thread
        self.account = account
    }

    /// Whether this watch is of drafts (a draft, a thread or an account) rather than preferences.
    public var watchesDrafts: Bool { draft != nil || thread != nil || account != nil }

    /// Whether a change of `key` is one this watch selects (scope aside).
    ///
    /// - Parameter key: The key changed.
    /// - Returns: Whether this is a watch of preferences whose keys or prefixes take in `key`.
    public func selects(key: String) -> Bool {
        guard !watchesDrafts else { return false }
        return (keys.isEmpty && prefixes.isEmpty) || keys.contains(key) || prefixes.contains { key.hasPrefix($0) }
    }

    /// Whether the watch's grant lets it see `event`: any event without a grant or with one at
    /// `/`; else a draft event of an account under its scope, or a preference event at a scope
    /// under it (or at none: a schema's, which every reader may read). A scoped watch's events
    /// are all at its scope, checked when it opened.
    package func mayShow(_ event: ChangeEvent) -> Bool {
        guard let grant, !grant.coversEverything else { return true }
        if event.isDraftChange { return event.account.map(grant.covers(account:)) ?? false }
        guard scope == nil, let changed = event.scope else { return true }
        return grant.covers(changed)
    }

    /// Whether a draft event is one this watch selects: of its draft, thread or account.
    ///
    /// - Parameter event: The draft event.
    /// - Returns: Whether the event is of the watched draft, thread or account.
    public func selects(_ event: ChangeEvent) -> Bool {
        guard event.isDraftChange, watchesDrafts else { return false }
        if let draft, event.draft != draft.uuidString { return false }
        if let thread, event.thread != thread, event.previousThread != thread { return false }
        if let account, event.account != account { return false }
        return true
    }
}
