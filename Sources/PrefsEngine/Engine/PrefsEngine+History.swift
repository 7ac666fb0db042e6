import Foundation
import Logging
import PrefsKit

/// History, the audit log, reads in the past, diffs and reverts: the change log read back.
///
/// The store as it was at a revision is its state now walked back through the log's later
/// changes (``KeyState/revert(_:)``), so a read in the past costs the changes made since, and
/// reaches back as far as the log holds every change — `compacted` (410) before that. Overrides
/// (`prefsd --override`) belong to the process, not to the store: past reads, history and diffs
/// leave them out.
extension PrefsEngine {
    public func changes(_ query: ChangeQuery) async throws -> ChangePage {
        try query.check()
        var filter = ChangeLogFilter(
            prefix: query.prefix, subtree: query.scope, author: query.author, newestFirst: query.order == .newestFirst)
        switch query.since {
        case .revision(let revision): filter.after = revision
        // Times are compared to the millisecond the API shows them with: a time copied from a
        // change includes it.
        case .time(let date): filter.from = date.timeIntervalSince1970 - 0.0005
        case nil: break
        }
        switch query.until {
        case .revision(let revision): filter.through = revision
        case .time(let date): filter.to = date.timeIntervalSince1970 + 0.0005
        case nil: break
        }
        let page = try await storage.changeLog(matching: filter, limit: query.limit + 1)
        let records = page.changes.prefix(query.limit).map(Self.record)
        var next: ChangeQuery?
        if page.changes.count > query.limit, let last = records.last {
            next = query
            if query.order == .newestFirst {
                next!.until = .revision(last.revision - 1)
            } else {
                next!.since = .revision(last.revision)
            }
        }
        return ChangePage(changes: Array(records), oldestRevision: page.oldestRevision, next: next)
    }

    public func history(of key: KeyName, scope: ScopePath, limit: Int, before: Revision?) async throws -> PreferenceHistory {
        guard (1...ChangeQuery.maximumLimit).contains(limit) else {
            throw PrefsError(.invalidRequest, "limit takes 1 to \(ChangeQuery.maximumLimit) steps, not \(limit).")
        }
        let name = key.rawValue
        let (current, state) = cache.read { ($0.revision, $0.keys[name] ?? KeyState()) }
        // Only changes at the scope or above it, and schemas, can change the value there.
        var filter = ChangeLogFilter(
            key: name, scopes: Array(scope.selfAndAncestors), through: current, newestFirst: true)
        var walked = state
        // The effective value after the change being looked at: the one before the change after it.
        var after = Self.effective(name, at: scope, walked)
        var steps: [PreferenceHistory.Step] = []
        var oldest: Revision = 1
        var next: Revision?
        // Most changes read make a step: the first page is little more than the steps asked
        // for, and pages double from there.
        var pageSize = min(limit * 2 + 8, 4096)
        walk: while true {
            let page = try await changeLog(matching: filter, limit: pageSize)
            oldest = page.oldestRevision
            for change in page.changes {
                if change.event.revision < oldest {
                    // Older than the log holds in full: kept because it set what is stored now.
                    // It explains the value before the log only if it set the layer that won then.
                    if steps.count < limit, change.event.revision < before ?? .max,
                        Self.setsWinningLayer(change, of: walked, at: scope)
                    {
                        steps.append(
                            .init(
                                change: Self.record(change), value: after.value ?? .null, source: after.source,
                                previousValue: nil, previousSource: nil))
                    }
                    break walk
                }
                // A conflict sync resolved here is a step of its own, which changes nothing itself:
                // what the entry holds before it is what it holds after.
                let isConflict = change.event.kind == .conflict
                if !isConflict { try walked.revert(change) }
                let previous = isConflict ? after : Self.effective(name, at: scope, walked)
                defer { after = previous }
                guard isConflict || previous.value != after.value || previous.source != after.source else { continue }
                guard change.event.revision < before ?? .max else { continue }
                if steps.count == limit {
                    next = steps.last?.change.revision
                    break walk
                }
                steps.append(
                    .init(
                        change: Self.record(change), value: after.value ?? .null, source: after.source,
                        previousValue: previous.value, previousSource: previous.source))
            }
            guard let last = page.changes.last, page.changes.count == pageSize else { break }
            filter.through = last.event.revision - 1
            pageSize = min(pageSize * 2, 4096)
        }
        let resolved = PreferenceResolver.resolve(key: name, at: scope, state: state, override: nil, revision: current)
        return PreferenceHistory(key: name, scope: scope, current: resolved, steps: steps, oldestRevision: oldest, next: next)
    }

    public func resolve(_ key: KeyName, scope: ScopePath, explain: Bool, atRevision revision: Revision) async throws
        -> ResolvedPreference
    {
        let past = try await states(at: revision, key: key.rawValue, prefix: nil)
        return PreferenceResolver.resolve(
            key: key.rawValue, at: scope, state: past.states[key.rawValue], override: nil, revision: revision, explain: explain)
    }

    public func list(scope: ScopePath, prefix: String?, atRevision revision: Revision) async throws -> [ResolvedPreference] {
        let past = try await states(at: revision, key: nil, prefix: prefix)
        return past.states.keys.sorted().compactMap { key in
            let resolved = PreferenceResolver.resolve(key: key, at: scope, state: past.states[key], override: nil, revision: revision)
            return resolved.isSet ? resolved : nil
        }
    }

    public func dump(scope: ScopePath, atRevision revision: Revision) async throws -> PrefsDump {
        let past = try await states(at: revision, key: nil, prefix: nil)
        return PrefsDump(subtree: scope, keys: past.states.lazy.map { (key: $0.key, state: $0.value) })
    }

    public func diff(from: Revision, to: Revision?, scope: ScopePath, prefix: String?) async throws -> PreferenceDiff {
        let to = to ?? cache.read { $0.revision }
        guard from <= to else {
            throw PrefsError(.invalidRequest, "A diff goes from a revision to a later one, not from \(from) back to \(to).")
        }
        let end = try await states(at: to, key: nil, prefix: prefix)
        let start = try await states(at: from, key: nil, prefix: prefix, walkingBackFrom: end)
        var differences: [PreferenceDiff.Difference] = []
        for key in Set(start.states.keys).union(end.states.keys).sorted() {
            let before = PreferenceResolver.resolve(key: key, at: scope, state: start.states[key], override: nil, revision: from)
            let after = PreferenceResolver.resolve(key: key, at: scope, state: end.states[key], override: nil, revision: end.revision)
            guard before.value != after.value || before.source != after.source else { continue }
            // The newest change between the two that could make the value at `scope` what it is.
            let made = start.walkedBack.first { change in
                change.event.key == key && (change.event.scope.map { $0.contains(scope) } ?? true)
            }
            differences.append(.init(key: key, before: before, after: after, change: made.map(Self.record)))
        }
        return PreferenceDiff(from: from, to: end.revision, scope: scope, differences: differences)
    }

    package func revert(
        _ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?, context: WriteContext
    ) async throws -> WriteResult {
        let key: String?
        let prefix: String?
        switch target {
        case .key(let name): (key, prefix) = (name.rawValue, nil)
        case .prefix(let text): (key, prefix) = (nil, text)
        }
        // What the target held at `scope` at `revision` is history: it cannot change, so it is
        // read before the write, which compares it with the target's state in its transaction.
        let past = try await states(at: revision, key: key, prefix: prefix).states
        let said = "revert of \(target.description) at \(scope.path) to revision \(revision)"
        var context = context
        context.origin.reason = context.origin.reason.map { "\($0) (\(said))" } ?? said
        return try await write(context) { batch in
            let current = batch.allKeys().filter { target.selects($0.key) }
            if let ifRevision {
                let here = current.values.map { $0.revision(at: scope) }.max() ?? 0
                guard here == ifRevision else {
                    throw PrefsError(
                        .staleRevision,
                        "\(target.description) is at revision \(here) at \(scope.path), not \(ifRevision); nothing was "
                            + "reverted. Look at it again (prefsctl history) and revert from its current revision.")
                }
            }
            for key in Set(current.keys).union(past.keys.filter(target.selects)).sorted() {
                try batch.restore(try KeyName(key), at: scope, to: past[key] ?? KeyState())
            }
            return WriteResult(revision: batch.revision)
        }
    }

    // MARK: The store in the past

    /// The states of the keys (`key`, or those under `prefix`, or all) as they were at
    /// `revision`: the current ones, or `walkingBackFrom`'s, walked back through the log's later
    /// changes — which it returns too, newest first.
    private func states(
        at revision: Revision, key: String?, prefix: String?, walkingBackFrom later: PastStates? = nil
    ) async throws -> PastStates {
        if revision > cache.read({ $0.revision }) {
            try await waitUntilTakenIn(revision) { PrefsError.ahead(reading: revision, newest: $0) }
        }
        let (from, states) =
            later.map { ($0.revision, $0.states) }
            ?? cache.read { snapshot in
                (snapshot.revision, snapshot.keys.filter { key.map($0.key.elementsEqual) ?? prefix.map($0.key.hasPrefix) ?? true })
            }
        guard revision < from else { return PastStates(revision: from, states: states, walkedBack: []) }
        var walked = states
        var changes: [LoggedChange] = []
        var filter = ChangeLogFilter(key: key, prefix: prefix, after: revision, through: from, newestFirst: true)
        while true {
            let page = try await changeLog(matching: filter, limit: 4096)
            guard revision >= page.oldestRevision - 1 else {
                throw PrefsError.compacted(reading: revision, oldest: page.oldestRevision)
            }
            for change in page.changes {
                guard let changed = change.event.key else { continue }
                var state = walked[changed] ?? KeyState()
                try state.revert(change)
                walked[changed] = state.isEmpty ? nil : state
                changes.append(change)
            }
            guard let last = page.changes.last, page.changes.count == 4096 else { break }
            filter.through = last.event.revision - 1
        }
        return PastStates(revision: revision, states: walked, walkedBack: changes)
    }

    // MARK: The key index

    /// The rows `filter` selects, at most `limit` of them, and the oldest revision the log holds
    /// in full, as ``PrefsStorage/changeLog(matching:limit:)`` reads them — fewer than `limit`
    /// only when no more match. A filter for one key reads, once the key index is complete
    /// (``KeyRevisions``), only that key's rows, by revision, wherever they lie in the log.
    private func changeLog(matching filter: ChangeLogFilter, limit: Int) async throws -> ChangeLogPage {
        guard let key = filter.key,
            let revisions = intake.keyRevisions.revisions(of: key, after: filter.after ?? 0, through: filter.through ?? .max)
        else { return try await storage.changeLog(matching: filter, limit: limit) }
        let ordered = filter.newestFirst ? Array(revisions.reversed()) : revisions
        var changes: [LoggedChange] = []
        var oldest: Revision = 1
        var start = 0
        repeat {
            // Most of a key's revisions pass the filter's other conditions (its scopes): a piece
            // of what is still wanted, looked up by the log's primary key.
            let end = min(start + min(max(limit - changes.count, 64), 4096), ordered.count)
            var piece = filter
            piece.revisions = Array(ordered[start..<end])
            let page = try await storage.changeLog(matching: piece, limit: limit - changes.count)
            changes += page.changes
            oldest = page.oldestRevision
            start = end
        } while changes.count < limit && start < ordered.count
        return ChangeLogPage(changes: changes, oldestRevision: oldest)
    }

    /// Rebuilds the key index from the change log up to the revision the engine opened at, in
    /// pages, in the background; until it is done, reads go the log's way. Should the log not
    /// be readable, the index stays incomplete and they go on that way.
    func rebuildKeyRevisions() -> Task<Void, Never> {
        Task(priority: .utility) { [storage, logger, index = intake.keyRevisions] in
            let pageSize = 65_536
            var rebuild = KeyRevisions.Rebuild()
            do {
                while true {
                    try Task.checkCancellation()
                    let page = try await storage.keyedRevisions(after: rebuild.revision, through: index.start, limit: pageSize)
                    rebuild.add(page)
                    if page.count < pageSize { break }
                }
            } catch {
                // Closed meanwhile: nothing to say.
                guard !Task.isCancelled else { return }
                logger.warning("Cannot index the change log by key; history reads the log from its newest end: \(error)")
                return
            }
            index.complete(with: rebuild)
        }
    }

    /// The effective value of `key` at `scope` in `state`, without overrides.
    private static func effective(_ key: String, at scope: ScopePath, _ state: KeyState)
        -> (value: JSONValue?, source: PreferenceSource)
    {
        PreferenceResolver.effectiveValue(at: scope, state: state, override: nil)
    }

    /// Whether `change` set the entry `state`'s value at `scope` comes from.
    private static func setsWinningLayer(_ change: LoggedChange, of state: KeyState, at scope: ScopePath) -> Bool {
        let revision = change.event.revision
        switch PreferenceResolver.effectiveValue(at: scope, state: state, override: nil).source {
        case .lock(let lockScope):
            return state.locks[lockScope] == revision || state.nearestValue(at: lockScope)?.stored.revision == revision
        case .scope(let valueScope):
            return state.values[valueScope]?.revision == revision
        case .default:
            return change.event.kind == .schema
        default:
            return false
        }
    }

    /// A logged change as the audit log shows it.
    static func record(_ change: LoggedChange) -> ChangeRecord {
        let event = change.event
        return ChangeRecord(
            revision: event.revision, time: Date(timeIntervalSince1970: change.time), kind: event.kind, key: event.key,
            scope: event.scope, value: event.kind.isTokenChange ? StoredToken.auditValue(of: event.value) : event.value,
            oldValue: change.oldValue.flatMap { try? JSONValue(parsing: $0) },
            draft: event.draft, attachment: event.attachment, account: event.account, thread: event.thread,
            author: change.author ?? ChangeAuthor(name: "unknown"), reason: change.reason)
    }
}

/// Key states as they were at a revision, and the changes walked back to reach them.
private struct PastStates {
    var revision: Revision
    var states: [String: KeyState]
    /// Newest first.
    var walkedBack: [LoggedChange]
}
