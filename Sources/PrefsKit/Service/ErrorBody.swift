

/// The body of every error answer: `{"error": {"code": "...", "message": "..."}}`, and for a
/// stale revision also `"current"`, the draft as it is now, or `"currentPreference"`, the key at
/// the scope as it is now.
public struct ErrorBody: Codable, Sendable {
    /// The error itself.
    public struct Detail: Codable, Sendable {
        /// The ``PrefsError/Code`` raw value, e.g. `locked`.
        public var code: String
        /// What went wrong, for people.
        public var message: String
        /// For `compacted`: the oldest revision the change log holds.
        public var oldestRevision: Revision?
        /// For a watch `since` a revision not reached yet: the newest one.
        public var newestRevision: Revision?
        /// For `behind`: the revision this host has taken in.
        public var appliedRevision: Revision?
        /// For `locked`: `{"key", "scope"}` of the lock that refused the write.
        public var lock: PreferenceLock?
    }

    /// The error.
    public var error: Detail
    /// For `stale_revision`: the draft as it is now.
    public var current: Draft?
    /// For `stale_revision` of a preference write: the key at the scope as it is now.
    public var currentPreference: ScopedPreference?

    /// Wraps an error for the wire.
    public init(_ error: PrefsError) {
        self.error = Detail(
            code: error.code.rawValue, message: error.message, oldestRevision: error.oldestRevision,
            newestRevision: error.newestRevision, appliedRevision: error.appliedRevision, lock: error.lock)
        self.current = error.currentDraft
        self.currentPreference = error.currentPreference
    }

    /// The error back, given the HTTP status it came with (for codes this version does not know).
    public func prefsError(httpStatus: Int) -> PrefsError {
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
