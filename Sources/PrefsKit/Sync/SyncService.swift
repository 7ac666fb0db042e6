import Foundation

/// Sync across devices, as every ``PrefsService`` offers it: the conflicts an upstream resolved,
/// and where a replica's sync with its upstream stands.
public protocol SyncService: Sendable {
    /// The conflicts sync recorded: at `scope` or below it, of `key`, after revision `since`,
    /// resolved at or after `from`; at most `limit`, oldest first unless `newestFirst`.
    ///
    /// - Throws: ``PrefsError`` — `forbidden` for a scope beyond the caller's.
    func conflicts(
        scope: ScopePath?, key: KeyName?, since: Revision?, from: Date?, limit: Int?, newestFirst: Bool
    ) async throws -> [SyncConflict]

    /// Where this replica's sync with its upstream stands.
    ///
    /// - Throws: ``PrefsError`` `not_found` for a store that is no replica.
    func syncStatus() async throws -> SyncStatus

    /// Exchanges with the upstream until in step (nothing to push, every change taken in), or
    /// `timeout` passes.
    ///
    /// - Throws: ``PrefsError`` — `unreachable` when the upstream could not be reached in time;
    ///   `not_found` for a store that is no replica.
    @discardableResult
    func syncNow(timeout: Duration) async throws -> SyncStatus

    /// Puts a conflict's loser back: sets the conflict's key at its scope to the losing value
    /// (or resets it, if the loser was a reset), as a new change whose reason names the conflict.
    /// On a replica, the change is pushed like any other.
    ///
    /// - Parameters:
    ///   - conflict: The conflict's revision.
    ///   - loser: Which of its losers (0: the first).
    /// - Throws: ``PrefsError`` — `not_found` for no such conflict or loser; as a set or reset
    ///   does.
    @discardableResult
    func restoreLoser(ofConflict conflict: Revision, loser: Int) async throws -> WriteResult
}

extension SyncService {
    /// The conflicts sync recorded, oldest first: all of them, or those `scope`, `key`, `since`
    /// and `limit` select.
    public func conflicts(
        scope: ScopePath? = nil, key: KeyName? = nil, since: Revision? = nil, limit: Int? = nil
    ) async throws -> [SyncConflict] {
        try await conflicts(scope: scope, key: key, since: since, from: nil, limit: limit, newestFirst: false)
    }
}
