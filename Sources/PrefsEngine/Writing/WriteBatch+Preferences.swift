import PrefsKit

/// The preference writes, each checked by ``PreferenceWriteRules`` against the state this batch
/// sees, then stored, logged and applied to the batch's overlay. A request that throws midway is
/// rolled back whole by the writer.
extension WriteBatch {
    /// Sets `key` to `value` at `scope`; locks at `permittedLocks` do not refuse it. Returns the
    /// change's revision; when `value` is already stored there (equal as JSON), nothing changes
    /// and it returns the current revision.
    func setValue(_ name: KeyName, to value: JSONValue, scope: ScopePath, permittedLocks: Set<ScopePath> = []) throws
        -> Revision
    {
        let key = name.rawValue
        let state = state(of: key)
        try checkReplicaMayWrite(at: scope)
        try rules.checkSet(key: name, value: value, scope: scope, state: state, permittedLocks: permittedLocks)
        guard state?.values[scope]?.value != value else { return revision }
        let revision = try record(
            .set, key: key, scope: scope, value: value, oldValue: state?.values[scope]?.value.canonicalText,
            oldRevision: state?.values[scope]?.revision
        ) { state, revision in
            state.values[scope] = StoredValue(value: value, revision: revision)
        }
        try connection.upsertValue(key: key, scope: scope, value: value, revision: revision)
        try pushLater(key, at: scope, value: value, shown: state?.values[scope]?.value)
        return revision
    }

    /// Removes `key`'s value at `scope` (and below, if `recursive`); locks at `permittedLocks`
    /// do not refuse it. Returns how many it removed.
    func resetValue(_ name: KeyName, scope: ScopePath, recursive: Bool, permittedLocks: Set<ScopePath> = []) throws -> Int {
        let key = name.rawValue
        let state = state(of: key)
        try checkReplicaMayWrite(at: scope)
        try rules.checkReset(key: name, scope: scope, state: state, permittedLocks: permittedLocks)
        let targets = (state?.values.keys.filter { recursive ? scope.contains($0) : $0 == scope } ?? []).sorted()
        for target in targets {
            try record(
                .reset, key: key, scope: target, oldValue: state?.values[target]?.value.canonicalText,
                oldRevision: state?.values[target]?.revision
            ) { state, _ in state.values[target] = nil }
            try connection.deleteValue(key: key, scope: target)
            try pushLater(key, at: target, value: nil, shown: state?.values[target]?.value)
        }
        return targets.count
    }

    /// Locks `key` at `scope`; nothing changes if it is already locked there.
    func lock(_ name: KeyName, scope: ScopePath) throws {
        let key = name.rawValue
        try refuseOnReplica("locks")
        guard state(of: key)?.locks[scope] == nil else { return }
        let revision = try record(.lock, key: key, scope: scope) { state, revision in state.locks[scope] = revision }
        try connection.insertLock(key: key, scope: scope, revision: revision)
    }

    /// Removes the lock on `key` at `scope`. Returns how many it removed: 0 when there is none
    /// there, and then nothing changes.
    func unlock(_ name: KeyName, scope: ScopePath) throws -> Int {
        let key = name.rawValue
        try refuseOnReplica("locks")
        guard let locked = state(of: key)?.locks[scope] else { return 0 }
        try record(.unlock, key: key, scope: scope, oldRevision: locked) { state, _ in state.locks[scope] = nil }
        try connection.deleteLock(key: key, scope: scope)
        return 1
    }

    /// Makes `key`'s value and lock at `scope` those `past` holds there (a revert): unlocks,
    /// sets or resets, then locks — a lock at `scope` itself never refusing the value put back.
    func restore(_ name: KeyName, at scope: ScopePath, to past: KeyState) throws {
        let now = state(of: name.rawValue) ?? KeyState()
        let (lockedNow, lockedThen) = (now.locks[scope] != nil, past.locks[scope] != nil)
        if lockedNow && !lockedThen { _ = try unlock(name, scope: scope) }
        if let stored = past.values[scope] {
            _ = try setValue(name, to: stored.value, scope: scope, permittedLocks: [scope])
        } else if now.values[scope] != nil {
            _ = try resetValue(name, scope: scope, recursive: false, permittedLocks: [scope])
        }
        if lockedThen && !lockedNow { try lock(name, scope: scope) }
    }

    /// Throws `stale_revision` unless `expected` is nil or `key`'s revision at `scope` as this
    /// batch sees it (``KeyState/revision(at:)``). Inside the transaction, before the write, so
    /// that no other write — on any host — can come between the check and the change.
    func checkRevision(_ expected: Revision?, of name: KeyName, at scope: ScopePath) throws {
        guard let expected else { return }
        let key = name.rawValue
        let state = state(of: key)
        guard state?.revision(at: scope) ?? 0 != expected else { return }
        throw PrefsError.staleRevision(expected: expected, current: ScopedPreference(key: key, scope: scope, state: state))
    }

    /// Registers `schema` for `key`, refusing it if a value stored for the key breaks it.
    func register(_ schema: PreferenceSchema, for name: KeyName) throws {
        let key = name.rawValue
        try schema.validateDefinition(for: key)
        let state = state(of: key)
        guard state?.schema != schema else { return }
        for (scope, stored) in (state?.values ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                try schema.validate(stored.value, for: key)
            } catch let error as PrefsError {
                throw PrefsError(
                    .invalidSchema,
                    "The new schema of '\(key)' does not fit the value stored at \(scope.path): \(error.message) "
                        + "Reset that value first."
                )
            }
        }
        let revision = try record(
            .schema, key: key, scope: nil, value: schema.jsonValue, oldValue: state?.schema?.canonicalText
        ) { state, _ in state.schema = schema }
        try connection.upsertSchema(key: key, schema: schema, revision: revision)
    }

    /// Applies one batch operation to `key`, its key checked; returns its revision (the current
    /// one if it changed nothing).
    func apply(_ operation: PreferenceOperation, to key: KeyName) throws -> Revision {
        switch operation.op {
        case .set:
            guard let value = operation.value else {
                throw PrefsError(.invalidRequest, "The set of '\(operation.key)' has no \"value\".")
            }
            return try setValue(key, to: value, scope: operation.scope)
        case .reset:
            _ = try resetValue(key, scope: operation.scope, recursive: operation.recursive ?? false)
            return revision
        }
    }

    /// Loads a dump: schemas first, then values, then locks. Everything must lie within the
    /// dump's scope. A value below a lock is accepted when the dump carries that lock itself (so
    /// a dump loads back into the store it came from); below any other lock it is refused.
    ///
    /// With `replacing`, the values and locks of the dump's scope and every scope below it that
    /// the dump does not hold are removed first, so that the subtree ends up equal to the dump.
    /// (Schemas are not per scope: the dump's are registered, and no other is removed.)
    func load(_ dump: PrefsDump, replacing: Bool) throws {
        for entry in dump.values where !dump.scope.contains(entry.scope) {
            throw PrefsError(.invalidRequest, "The dump of \(dump.scope.path) has a value at \(entry.scope.path), outside it.")
        }
        for entry in dump.locks where !dump.scope.contains(entry.scope) {
            throw PrefsError(.invalidRequest, "The dump of \(dump.scope.path) has a lock at \(entry.scope.path), outside it.")
        }
        let locks = Dictionary(grouping: dump.locks, by: \.key).mapValues { Set($0.map(\.scope)) }
        if replacing { try removeAbsent(from: dump, locks: locks) }
        for (key, schema) in dump.schemas.sorted(by: { $0.key < $1.key }) {
            try register(schema, for: try KeyName(key))
        }
        for entry in dump.values {
            _ = try setValue(try KeyName(entry.key), to: entry.value, scope: entry.scope, permittedLocks: locks[entry.key] ?? [])
        }
        for entry in dump.locks {
            try lock(try KeyName(entry.key), scope: entry.scope)
        }
    }

    /// Removes the locks, then the values, of the dump's subtree that the dump does not hold
    /// (`locks`: the dump's, by key). A value below a lock the dump keeps may go; one below a
    /// lock outside the subtree is refused, as its setting would be.
    private func removeAbsent(from dump: PrefsDump, locks: [String: Set<ScopePath>]) throws {
        let values = Dictionary(grouping: dump.values, by: \.key).mapValues { Set($0.map(\.scope)) }
        for (key, state) in allKeys().sorted(by: { $0.key < $1.key }) {
            for scope in state.locks.keys.sorted() where dump.scope.contains(scope) && locks[key]?.contains(scope) != true {
                _ = try unlock(KeyName(checked: key), scope: scope)
            }
            for scope in state.values.keys.sorted() where dump.scope.contains(scope) && values[key]?.contains(scope) != true {
                _ = try resetValue(KeyName(checked: key), scope: scope, recursive: false, permittedLocks: locks[key] ?? [])
            }
        }
    }
}
