/// The answer of `GET /v1/conflicts`: the conflicts sync recorded that the query selects.
package struct ConflictList: Codable, Sendable, Hashable {
    /// The conflicts, oldest first unless the query asked for the newest first.
    package var conflicts: [SyncConflict]

    /// A list.
    package init(conflicts: [SyncConflict]) {
        self.conflicts = conflicts
    }
}
