import PrefsKit
import Synchronization

/// The revisions of each key's changes in the change log, oldest first, kept in memory as etcd's
/// key index is: a key's history, a read in the past and a revert read the key's own rows by
/// revision, wherever they lie in the log, rather than the log from its newest end until they
/// are found (a key changed once before a million others cost ~50 ms that way).
///
/// It is rebuilt when the engine opens, from the log, in the background — the engine is ready
/// before it is complete, and until then ``revisions(of:after:through:)`` says nil and readers go
/// the log's way — and kept by ``ChangeIntake`` as changes are taken in: the engine's own and,
/// on PostgreSQL, other hosts'. It costs 8 bytes for each keyed change the log holds; it drops
/// what compaction drops (``dropCompacted(before:stored:)``), and gets back what another host's
/// compaction kept that the cache could not tell (``restore(_:below:through:)``).
package final class KeyRevisions: Sendable {
    /// One key's changes.
    fileprivate struct Entry {
        /// Their revisions, oldest first.
        var revisions: [Revision] = []
        /// The newest of them that is a schema's: compaction keeps it if it set the schema stored
        /// now, which the cache does not date.
        var newestSchema: Revision?

        mutating func append(_ revision: Revision, isSchema: Bool) {
            revisions.append(revision)
            if isSchema { newestSchema = revision }
        }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Whether the revisions up to ``KeyRevisions/start`` are in: the rebuild has finished.
        var isComplete = false
        /// The log's oldest revision at the newest compaction taken in.
        var compactedBelow: Revision = 0
    }

    /// The newest revision when the engine opened: the rebuild reads the log up to it, the
    /// intake adds what follows.
    package let start: Revision
    private let state = Mutex(State())

    /// An index that the intake keeps from after `start`, and the rebuild completes up to it.
    package init(start: Revision) {
        self.start = start
    }

    /// Adds changes taken in after ``start``, in revision order.
    package func add(_ changes: some Sequence<ChangeEvent>) {
        state.withLock { state in
            for change in changes {
                guard let key = change.key else { continue }
                state.entries[key, default: Entry()].append(change.revision, isSchema: change.kind == .schema)
            }
        }
    }

    /// The log's keyed changes up to ``start``, as the rebuild reads them, page by page.
    package struct Rebuild {
        fileprivate var entries: [String: Entry] = [:]
        /// The newest revision read so far.
        package private(set) var revision: Revision = 0

        /// Nothing read yet.
        package init() {}

        /// Adds the next page of keyed changes, oldest first.
        package mutating func add(_ page: [KeyedRevision]) {
            for change in page {
                entries[change.key, default: Entry()].append(change.revision, isSchema: change.isSchema)
            }
            revision = page.last?.revision ?? revision
        }
    }

    /// Completes the index with what `rebuild` read of the log up to ``start``.
    package func complete(with rebuild: Rebuild) {
        var older = rebuild.entries
        state.withLock { state in
            for (key, newer) in state.entries {
                var entry = older[key] ?? Entry()
                entry.revisions += newer.revisions
                entry.newestSchema = newer.newestSchema ?? entry.newestSchema
                older[key] = entry
            }
            state.entries = older
            state.isComplete = true
        }
    }

    /// Whether the rebuild has completed the index.
    package var isComplete: Bool { state.withLock { $0.isComplete } }

    /// The revisions of `key`'s changes after `after` up to `through`, oldest first; nil until the
    /// index is complete.
    package func revisions(of key: String, after: Revision, through: Revision) -> [Revision]? {
        state.withLock { state in
            guard state.isComplete else { return nil }
            guard let revisions = state.entries[key]?.revisions else { return [] }
            let lower = revisions.partitioningIndex { $0 > after }
            let upper = revisions.partitioningIndex { $0 > through }
            return lower < upper ? Array(revisions[lower..<upper]) : []
        }
    }

    /// Forgets the revisions below `oldest` that compaction dropped: all of them but those that
    /// set what is stored now — a value's or a lock's in `stored`, or a key's newest schema.
    package func dropCompacted(before oldest: Revision, stored: [String: KeyState]) {
        state.withLock { state in
            state.compactedBelow = max(state.compactedBelow, oldest)
            let touched = state.entries.compactMap { key, entry in entry.revisions.first.map { $0 < oldest } == true ? key : nil }
            for key in touched {
                guard var entry = state.entries[key] else { continue }
                let below = entry.revisions.partitioningIndex { $0 >= oldest }
                var kept = Set(stored[key].map { $0.values.values.map(\.revision) + $0.locks.values } ?? [])
                if let schema = entry.newestSchema { kept.insert(schema) }
                entry.revisions = entry.revisions[..<below].filter(kept.contains) + entry.revisions[below...]
                state.entries[key] = entry.revisions.isEmpty ? nil : entry
            }
        }
    }
}

extension KeyRevisions {
    /// The log's oldest revision at the newest compaction the index has dropped revisions for.
    package var compactedBelow: Revision { state.withLock { $0.compactedBelow } }

    /// Puts back the revisions `kept` — the log's keyed rows below `below`, read after the
    /// compaction that moved the log's start there — that are missing, up to `applied` (the
    /// intake adds what follows). ``dropCompacted(before:stored:)`` keeps what the cache says is
    /// stored, and another host's compaction kept what was stored as it committed: a change
    /// replaced since, which the cache no longer names, is still in the log until the next one.
    ///
    /// - Returns: false, changing nothing, if the index is not complete yet, or if a newer
    ///   compaction has been taken in since `kept` was read (it may have dropped some of them).
    package func restore(_ kept: [KeyedRevision], below: Revision, through applied: Revision) -> Bool {
        state.withLock { state in
            guard state.isComplete, state.compactedBelow == below else { return false }
            for change in kept where change.revision < below && change.revision <= applied {
                var entry = state.entries[change.key] ?? Entry()
                let index = entry.revisions.partitioningIndex { $0 >= change.revision }
                guard index == entry.revisions.endIndex || entry.revisions[index] != change.revision else { continue }
                entry.revisions.insert(change.revision, at: index)
                if change.isSchema, (entry.newestSchema ?? 0) < change.revision { entry.newestSchema = change.revision }
                state.entries[change.key] = entry
            }
            return true
        }
    }
}

extension RandomAccessCollection {
    /// The index of the first element for which `isAbove` holds, in a collection where it holds
    /// for a suffix of the elements (a binary search); `endIndex` if it holds for none.
    fileprivate func partitioningIndex(where isAbove: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if isAbove(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
