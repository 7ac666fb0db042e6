import Foundation

/// The drafts an optimistic transaction read — by id, by account, by thread, or all of them —
/// which another host must not have changed for it to commit after that host
/// (`prefsd_commit_after`).
struct DraftsRead {
    private(set) var ids: Set<String> = []
    private(set) var accounts: Set<String> = []
    private(set) var threads: Set<String> = []
    /// Whether a read listed drafts of every account and thread.
    private(set) var all = false

    /// Whether the transaction read no draft.
    var isEmpty: Bool { ids.isEmpty && accounts.isEmpty && threads.isEmpty && !all }

    mutating func read(_ id: UUID) {
        ids.insert(id.uuidString)
    }

    /// A listing of `account`'s and/or `thread`'s drafts (neither: every draft).
    mutating func listed(account: String?, thread: String?) {
        if let account { accounts.insert(account) }
        if let thread { threads.insert(thread) }
        if account == nil && thread == nil { all = true }
    }
}
