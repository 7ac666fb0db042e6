import Foundation

/// Who changed what and when, reads in the past, and putting things back: what the change log
/// answers beyond watches. The embedded stores and ``PrefsService`` clients implement it alike.
///
/// A revision older than the change log holds in full is refused with `compacted` (410), which
/// carries the oldest revision it holds.
public protocol HistoryService: Sendable {
    /// The history of `key`'s effective value at `scope`, newest first.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope whose effective value to follow.
    ///   - limit: The most steps to return.
    ///   - before: Only steps before this revision (the previous page's ``PreferenceHistory/next``).
    /// - Returns: The steps, and where the next page starts.
    func history(of key: KeyName, scope: ScopePath, limit: Int, before: Revision?) async throws -> PreferenceHistory

    /// A page of the audit log.
    ///
    /// - Parameter query: Which changes, and the page's order and size.
    /// - Returns: The changes, and the query of the next page.
    func changes(_ query: ChangeQuery) async throws -> ChangePage

    /// `key`'s effective value at `scope` as it was at `revision`.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope to resolve at.
    ///   - explain: Whether to include the chain of layers consulted.
    ///   - revision: The revision to read at.
    /// - Returns: The value, its source and the revision that set it, as they were.
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool, atRevision revision: Revision) async throws
        -> ResolvedPreference

    /// The effective values under `scope` as they were at `revision`.
    ///
    /// - Parameters:
    ///   - scope: The scope to resolve at.
    ///   - prefix: Only keys starting with this.
    ///   - revision: The revision to read at.
    /// - Returns: The values in key order.
    func list(scope: ScopePath, prefix: String?, atRevision revision: Revision) async throws -> [ResolvedPreference]

    /// What was stored at `scope` and below at `revision`, as ``PreferencesService/dump(scope:)``
    /// gives it.
    ///
    /// - Parameters:
    ///   - scope: The subtree to export.
    ///   - revision: The revision to read at.
    /// - Returns: The values, locks and schemas then.
    func dump(scope: ScopePath, atRevision revision: Revision) async throws -> PrefsDump

    /// The effective values at `scope` that differ between two revisions, each with the change
    /// that made the difference.
    ///
    /// - Parameters:
    ///   - from: The first revision.
    ///   - to: The second revision; nil for now.
    ///   - scope: The scope to compare at.
    ///   - prefix: Only keys starting with this.
    /// - Returns: The differences, in key order.
    func diff(from: Revision, to: Revision?, scope: ScopePath, prefix: String?) async throws -> PreferenceDiff

    /// Makes `target` at `scope` what it was at `revision` — its value or absence, its lock or
    /// none — as one new change (one transaction for a prefix), whose reason says what it
    /// reverted.
    ///
    /// - Parameters:
    ///   - target: A key, or every key under a prefix.
    ///   - scope: The scope whose entries to put back.
    ///   - revision: The revision to put back.
    ///   - ifRevision: Only if the target's revision at `scope` (the newest of its keys', for a
    ///     prefix) is this one.
    /// - Returns: The revision of the change, and how many entries it changed.
    /// - Throws: ``PrefsError`` — `stale_revision` if `ifRevision` is not current; `compacted`.
    @discardableResult
    func revert(_ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?) async throws
        -> WriteResult
}

/// What a revert puts back.
public enum RevertTarget: Sendable, Hashable {
    /// One key.
    case key(KeyName)
    /// Every key starting with this.
    case prefix(String)

    /// Whether `key` is put back.
    package func selects(_ key: String) -> Bool {
        switch self {
        case .key(let name): name.rawValue == key
        case .prefix(let prefix): key.hasPrefix(prefix)
        }
    }

    /// The target as a reason words it.
    package var description: String {
        switch self {
        case .key(let name): "'\(name.rawValue)'"
        case .prefix(let prefix): "every key under '\(prefix)'"
        }
    }
}

extension PrefsService {
    /// Runs `body` with `reason` recorded on every change it makes through this service (the
    /// `Prefs-Reason` header, for a client of prefsd).
    ///
    /// - Parameters:
    ///   - reason: Why: one line of at most 500 bytes, kept with each change like a commit message.
    ///   - body: The writes.
    /// - Returns: What `body` returns.
    public func withReason<T>(_ reason: String, _ body: () async throws -> T) async throws -> T {
        try ChangeOrigin.checkReason(reason)
        var origin = ChangeOrigin.current ?? ChangeOrigin()
        origin.reason = reason
        return try await ChangeOrigin.$current.withValue(origin) { try await body() }
    }

    /// Sets `key` to `value` at `scope`, recording why.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The new value.
    ///   - scope: The scope to set it at.
    ///   - ifRevision: Only if the key's revision at `scope` is this one.
    ///   - reason: Why, kept with the change.
    /// - Returns: The change's revision.
    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath = .root, ifRevision: Revision? = nil, reason: String)
        async throws -> WriteResult
    {
        try await withReason(reason) { try await set(KeyName(key), to: value, scope: scope, ifRevision: ifRevision) }
    }

    /// Removes `key`'s value at `scope`, recording why.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope to reset it at.
    ///   - recursive: Whether to reset it below `scope` too.
    ///   - ifRevision: Only if the key's revision at `scope` is this one.
    ///   - reason: Why, kept with the change.
    /// - Returns: The change's revision, and how many values it removed.
    @discardableResult
    public func reset(
        _ key: String, scope: ScopePath = .root, recursive: Bool = false, ifRevision: Revision? = nil, reason: String
    ) async throws -> WriteResult {
        try await withReason(reason) {
            try await reset(KeyName(key), scope: scope, recursive: recursive, ifRevision: ifRevision)
        }
    }

    /// Makes `key` at `scope` what it was at `revision`.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope whose entries to put back.
    ///   - revision: The revision to put back.
    ///   - ifRevision: Only if the key's revision at `scope` is this one.
    /// - Returns: The change's revision.
    @discardableResult
    public func revert(_ key: String, scope: ScopePath, to revision: Revision, ifRevision: Revision? = nil) async throws
        -> WriteResult
    {
        try await revert(.key(KeyName(key)), scope: scope, to: revision, ifRevision: ifRevision)
    }

    /// The history of `key`'s effective value at `scope`, newest first.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope whose effective value to follow.
    ///   - limit: The most steps to return; 20 by default.
    /// - Returns: The steps, and where the next page starts.
    public func history(of key: String, scope: ScopePath = .root, limit: Int = 20) async throws -> PreferenceHistory {
        try await history(of: KeyName(key), scope: scope, limit: limit, before: nil)
    }
}
