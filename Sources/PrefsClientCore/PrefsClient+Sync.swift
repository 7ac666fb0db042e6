import Foundation
import PrefsKit

/// Sync across devices, over the daemon's API: the conflicts an upstream resolved
/// (`/v1/conflicts`), and a device daemon's sync (`/v1/sync`, `/v1/sync:now`).
extension PrefsClient {
    /// The conflicts sync recorded: at `scope` or below it, of `key`, after revision `since`,
    /// resolved at or after `from`; at most `limit`, oldest first unless `newestFirst`.
    ///
    /// - Throws: ``PrefsError`` — `forbidden` for a scope beyond the caller's.
    public func conflicts(
        scope: ScopePath? = nil, key: KeyName? = nil, since: Revision? = nil, from: Date? = nil, limit: Int? = nil,
        newestFirst: Bool = false
    ) async throws -> [SyncConflict] {
        let answer: ConflictList = try await call(
            "GET", "/v1/conflicts",
            query: [
                "scope": scope?.path, "key": key?.rawValue, "since": since.map(String.init),
                "from": from.map(WireJSON.text(of:)), "limit": limit.map(String.init), "order": newestFirst ? "newest" : nil,
            ])
        return answer.conflicts
    }

    public func restoreLoser(ofConflict conflict: Revision, loser: Int = 0) async throws -> WriteResult {
        try await call("POST", "/v1/conflicts/\(conflict)/restore", query: ["loser": String(loser)])
    }

    /// Where the daemon's sync with its upstream stands.
    ///
    /// - Throws: ``PrefsError`` `not_found` when the daemon has no upstream.
    public func syncStatus() async throws -> SyncStatus {
        try await call("GET", "/v1/sync")
    }

    /// Has the daemon exchange with its upstream until it is in step (nothing to push, and every
    /// change the upstream has taken in), or `timeout` passes (whole seconds, at least one). The
    /// transport's own timeout must be longer than `timeout`.
    ///
    /// - Throws: ``PrefsError`` — `unreachable` when the upstream could not be reached in time
    ///   (the message says why); `not_found` when the daemon has no upstream.
    @discardableResult
    public func syncNow(timeout: Duration = .seconds(30)) async throws -> SyncStatus {
        let seconds = max(1, Int64((Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18).rounded(.up)))
        return try await call("POST", "/v1/sync:now", query: ["timeout": String(seconds)])
    }
}
