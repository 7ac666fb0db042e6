

/// The body of every error answer: `{"error": {"code": "...", "message": "..."}}`, and for a
/// stale revision also `"current"`, the draft as it is now, or `"currentPreference"`, the key at
/// the scope as it is now.
package struct ErrorBody: Codable, Sendable {
    /// The error itself.
    package struct Detail: Codable, Sendable {
        /// The ``PrefsError/Code`` raw value, e.g. `locked`.
        package var code: String
        /// What went wrong, for people.
        package var message: String
        /// For `compacted`: the oldest revision the change log holds.
        package var oldestRevision: Revision?
        /// For a watch `since` a revision not reached yet: the newest one.
        package var newestRevision: Revision?
        /// For `behind`: the revision this host has taken in.
        package var appliedRevision: Revision?
        /// For `locked`: `{"key", "scope"}` of the lock that refused the write.
        package var lock: PreferenceLock?
    }

    /// The error.
    package var error: Detail
    /// For `stale_revision`: the draft as it is now.
    package var current: Draft?
    /// For `stale_revision` of a preference write: the key at the scope as it is now.
    package var currentPreference: ScopedPreference?

    /// Wraps an error for the wire.
    package init(_ error: PrefsError) {
        self.error = Detail(
            code: error.code.rawValue, message: error.message, oldestRevision: error.oldestRevision,
            newestRevision: error.newestRevision, appliedRevision: error.appliedRevision, lock: error.lock)
        self.current = error.currentDraft
        self.currentPreference = error.currentPreference
    }

    /// The error back, given the HTTP status it came with (for codes this version does not know).
    package func prefsError(httpStatus: Int) -> PrefsError {
        PrefsError(
            PrefsError.Code(rawValue: error.code) ?? PrefsError.Code(httpStatus: httpStatus),
            error.message,
            oldestRevision: error.oldestRevision,
            newestRevision: error.newestRevision,
            appliedRevision: error.appliedRevision,
            currentDraft: current,
            currentPreference: currentPreference,
            lock: error.lock
        )
    }
}
