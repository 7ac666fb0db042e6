/// The checks every preference write passes before anything is stored. Pure, so the store runs
/// them inside its write transaction against its cache and tests run them directly.
package struct PreferenceWriteRules: Sendable, Hashable {
    /// The largest value accepted, in bytes of canonical JSON (64 KiB by default).
    package var maximumValueBytes: Int
    /// Whether keys without a schema are refused (`prefsd --strict`).
    package var strict: Bool
    /// The most operations one batch may hold (`prefsd --max-batch-operations`).
    package var maximumBatchOperations: Int

    /// The default limits: 64 KiB values, schemas optional.
    package static let standard = PreferenceWriteRules()

    /// Rules with these limits.
    package init(maximumValueBytes: Int = 64 * 1024, strict: Bool = false, maximumBatchOperations: Int = 10_000) {
        self.maximumValueBytes = maximumValueBytes
        self.strict = strict
        self.maximumBatchOperations = maximumBatchOperations
    }

    /// Throws `too_large` for a batch of more operations than the limit.
    package func checkBatch(_ batch: PreferenceBatch) throws {
        guard batch.operations.count <= maximumBatchOperations else {
            throw PrefsError(
                .tooLarge,
                "The batch has \(batch.operations.count) operations; the limit is \(maximumBatchOperations). Split it, or raise --max-batch-operations."
            )
        }
    }

    /// Throws unless `value` may be set for `key` at `scope`, given what is stored for the key.
    /// Locks at `permittedLocks` do not count (a dump being loaded carries them itself).
    package func checkSet(
        key: KeyName, value: JSONValue, scope: ScopePath, state: KeyState?, permittedLocks: Set<ScopePath> = []
    ) throws {
        try checkValue(value, for: key.rawValue, schema: state?.schema)
        try checkNotBelowLock(key: key.rawValue, scope: scope, state: state, doing: "set", permitted: permittedLocks)
    }

    /// Throws unless `value` is an acceptable value for `key` under `schema` (size, schema, strict).
    package func checkValue(_ value: JSONValue, for key: String, schema: PreferenceSchema?) throws {
        if case .null = value {
            throw PrefsError(.invalidValue, "null is not a value for '\(key)'; to remove a value, reset it.")
        }
        guard value.isFinite else {
            throw PrefsError(.invalidValue, "The value for '\(key)' holds NaN or an infinity, which JSON cannot express.")
        }
        let size = value.canonicalData.count
        if size > maximumValueBytes {
            throw PrefsError(
                .tooLarge, "The value for '\(key)' is \(size) bytes; the limit is \(maximumValueBytes) bytes.")
        }
        guard let schema else {
            if strict {
                throw PrefsError(
                    .unknownKey,
                    "'\(key)' has no schema and the store is strict (prefsd --strict); register a schema for it first."
                )
            }
            return
        }
        try schema.validate(value, for: key)
    }

    /// Throws unless `key`'s value at `scope` may be reset. Locks at `permittedLocks` do not
    /// count (a dump being loaded in place of the subtree carries them itself).
    package func checkReset(key: KeyName, scope: ScopePath, state: KeyState?, permittedLocks: Set<ScopePath> = []) throws {
        try checkNotBelowLock(key: key.rawValue, scope: scope, state: state, doing: "reset", permitted: permittedLocks)
    }

    /// Throws `locked` when a lock above `scope` (strictly above) governs `key`: values can be
    /// changed at the lock's own scope, never below it. The error carries the lock, and its
    /// message names no client's command: each client adds its own way of removing the lock.
    package func checkNotBelowLock(
        key: String, scope: ScopePath, state: KeyState?, doing verb: String, permitted: Set<ScopePath> = []
    ) throws {
        guard let state, let lockScope = state.governingLock(at: scope), lockScope != scope,
            !permitted.contains(lockScope)
        else { return }
        throw PrefsError(
            .locked,
            "'\(key)' is locked at \(lockScope.path), so it cannot be \(verb) at \(scope.path). "
                + "Change it at \(lockScope.path), or remove the lock first.",
            lock: PreferenceLock(key: key, scope: lockScope)
        )
    }
}
