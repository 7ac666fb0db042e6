/// An error the service reports to its callers: a stable machine-readable ``Code`` and a message
/// for people that says what went wrong and, where it can, how to fix it.
///
/// The same value travels through every layer: the store throws it, the server renders it as
/// `{"error": {"code", "message"}}` with its code's HTTP status, the client decodes it back, and
/// `prefsctl` exits with its code's exit status.
public struct PrefsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. The raw value is the `code` of the HTTP error body.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// A request that cannot be carried out as asked: a bad parameter, field or option
        /// (HTTP 400).
        case invalidRequest = "invalid_request"
        /// A body that is not JSON (HTTP 400).
        case invalidJSON = "invalid_json"
        /// A key name that breaks the rules (HTTP 400; see ``KeyName``).
        case invalidKey = "invalid_key"
        /// A scope path that breaks the rules (HTTP 400; see ``ScopePath``).
        case invalidScope = "invalid_scope"
        /// A value its key's schema refuses, or that no value may be (HTTP 400).
        case invalidValue = "invalid_value"
        /// A schema that contradicts itself, or that a stored value breaks (HTTP 400).
        case invalidSchema = "invalid_schema"
        /// A write of a key with no schema to a strict store (`prefsd --strict`; HTTP 400).
        case unknownKey = "unknown_key"
        /// No such draft, attachment, thread, schema, file or endpoint (HTTP 404).
        case notFound = "not_found"
        /// A known path asked with a method it does not take (HTTP 405, with `Allow`).
        case methodNotAllowed = "method_not_allowed"
        /// A write below a lock on the key (HTTP 409); ``PrefsError/lock`` is the lock.
        case locked = "locked"
        /// A request at odds with the state of what it changes, such as a file that got shorter
        /// while it was being sent (HTTP 409).
        case conflict = "conflict"
        /// A conditional write (`ifRevision`, `If-Match`) whose draft or key has moved on
        /// (HTTP 412); nothing was changed, and the error carries the current state.
        case staleRevision = "stale_revision"
        /// An `Idempotency-Key` already used for a different request (HTTP 422): nothing was
        /// changed. A new request takes a new key.
        case idempotencyKeyReused = "idempotency_key_reused"
        /// Bytes sent under a SHA-256 (`PATCH /v1/blobs/{sha256}`) that hash to another (HTTP
        /// 422): nothing of them was kept; the upload starts again from its first byte.
        case digestMismatch = "digest_mismatch"
        /// A request with the same `Idempotency-Key` is still being carried out (HTTP 409): send it
        /// again in a moment to get its answer.
        case requestInProgress = "request_in_progress"
        /// A value, body or upload over its size limit (HTTP 413).
        case tooLarge = "too_large"
        /// A configured bound on what the daemon serves at once (e.g. `--max-watches`) is reached.
        case limitReached = "limit_reached"
        /// A watch resumed from a revision the change log no longer holds (HTTP 410);
        /// ``PrefsError/oldestRevision`` is the oldest it holds.
        case compacted = "compacted"
        /// A request without the token the daemon was given (HTTP 401).
        case unauthorized = "unauthorized"
        /// A setup the daemon refuses as unsafe: a listening address that is not loopback, a
        /// folder or password file others could reach (HTTP 403).
        case forbidden = "forbidden"
        /// The disk is full: nothing was stored (HTTP 507).
        case storageFull = "storage_full"
        /// The daemon or store is closing: nothing more is served (HTTP 503).
        case shuttingDown = "shutting_down"
        /// The service cannot serve the request now: its database is busy, read-only or out of
        /// reach (HTTP 503). Retry later.
        case unavailable = "unavailable"
        /// This host has not taken in a revision a request asked for (`minRevision`) within the
        /// wait allowed: another host of the same database made it, and it is on its way.
        case behind = "behind"
        /// The client could not reach the daemon (no socket, refused, cut off): the client makes
        /// it when a request gets no answer. The daemon sends it (HTTP 503) for its own upstream
        /// only: a replica's `POST /v1/sync:now` whose upstream could not be reached in time.
        case unreachable = "unreachable"
        /// A write was sent but whether it was stored cannot be told: the connection to the
        /// daemon (or the daemon's to its database) was lost after it went out, and no answer came
        /// before the deadline. Repeating it with the same `Idempotency-Key` is safe and answers
        /// what became of it; `prefsctl get` shows the current value.
        case outcomeUnknown = "outcome_unknown"
        /// A failure inside the service that the caller cannot fix (HTTP 500).
        case `internal` = "internal"

        /// The HTTP status the daemon answers with.
        package var httpStatus: Int {
            switch self {
            case .invalidRequest, .invalidJSON, .invalidKey, .invalidScope, .invalidValue, .invalidSchema,
                .unknownKey:
                400
            case .unauthorized: 401
            case .forbidden: 403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .locked, .conflict, .requestInProgress: 409
            case .compacted: 410
            case .staleRevision: 412
            case .tooLarge: 413
            case .idempotencyKeyReused, .digestMismatch: 422
            case .limitReached: 429
            case .storageFull: 507
            case .shuttingDown, .unavailable, .behind, .unreachable, .outcomeUnknown: 503
            case .internal: 500
            }
        }

        /// The exit status `prefsctl` ends with (README's table: 1 failed, 3 not found, 4 conflict,
        /// 5 outcome unknown, 69 the daemon unreachable or gone). Bad keys and scopes on the
        /// command line are usage errors (2), which prefsctl finds before it asks the daemon.
        package var exitCode: Int32 {
            switch self {
            case .notFound: 3
            case .locked, .conflict, .staleRevision, .requestInProgress: 4
            case .outcomeUnknown: 5
            case .unreachable, .shuttingDown: 69
            default: 1
            }
        }

        /// The code a bare HTTP status stands for, when an answer carries no error body.
        package init(httpStatus: Int) {
            switch httpStatus {
            case 401: self = .unauthorized
            case 403: self = .forbidden
            case 404: self = .notFound
            case 405: self = .methodNotAllowed
            case 409: self = .conflict
            case 410: self = .compacted
            case 412: self = .staleRevision
            case 413: self = .tooLarge
            case 422: self = .idempotencyKeyReused
            case 429: self = .limitReached
            case 503: self = .unavailable
            case 507: self = .storageFull
            case 400..<500: self = .invalidRequest
            default: self = .internal
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people.
    public var message: String
    /// For `compacted`: the oldest revision the change log still holds.
    public var oldestRevision: Revision?
    /// For a watch from a revision the store has not reached (`ahead(since:newest:)`): the
    /// store's newest revision.
    public var newestRevision: Revision?
    /// For `behind`: the newest revision this host has taken in.
    public var appliedRevision: Revision?
    /// For `stale_revision`: the draft as it is now, to rebase the change on.
    public var currentDraft: Draft?
    /// For `stale_revision` of a preference write: the key at the scope as it is now.
    public var currentPreference: ScopedPreference?
    /// For `locked`: the lock that refused the write, so that each client can name its own way
    /// of removing it (`prefsctl unlock KEY --scope S`, `DELETE /v1/locks/KEY?scope=S`).
    public var lock: PreferenceLock?

    /// Makes an error with a code and a message.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A sentence for people that says what went wrong and, where it can, how to
    ///     fix it.
    ///   - oldestRevision: For `compacted`: the oldest revision the change log still holds.
    ///   - newestRevision: For a watch from a revision the store has not reached: its newest
    ///     revision.
    ///   - appliedRevision: For `behind`: the newest revision this host has taken in.
    ///   - currentDraft: For `stale_revision` of a draft: the draft as it is now.
    ///   - currentPreference: For `stale_revision` of a preference write: the key at the scope
    ///     as it is now.
    ///   - lock: For `locked`: the lock that refused the write.
    public init(
        _ code: Code, _ message: String, oldestRevision: Revision? = nil, newestRevision: Revision? = nil,
        appliedRevision: Revision? = nil, currentDraft: Draft? = nil, currentPreference: ScopedPreference? = nil,
        lock: PreferenceLock? = nil
    ) {
        self.code = code
        self.message = message
        self.oldestRevision = oldestRevision
        self.newestRevision = newestRevision
        self.appliedRevision = appliedRevision
        self.currentDraft = currentDraft
        self.currentPreference = currentPreference
        self.lock = lock
    }

    public var description: String { message }

    /// The error for resuming a watch from a revision the change log no longer holds.
    package static func compacted(since: Revision, oldest: Revision) -> PrefsError {
        PrefsError(
            .compacted,
            "Changes before revision \(oldest) have been compacted; a watch cannot resume from revision \(since). "
                + "Read the current values and watch from their revision.",
            oldestRevision: oldest)
    }

    /// The error for reading the store as it was at a revision the change log no longer holds
    /// every later change of.
    package static func compacted(reading revision: Revision, oldest: Revision) -> PrefsError {
        PrefsError(
            .compacted,
            "Changes before revision \(oldest) have been compacted; the store cannot be read as it was at revision "
                + "\(revision). Read at revision \(oldest - 1) or later (prefsd --retain-changes and --retain-for keep more).",
            oldestRevision: oldest)
    }

    /// The error for reading the store at a revision it has not reached.
    package static func ahead(reading revision: Revision, newest: Revision) -> PrefsError {
        PrefsError(
            .invalidRequest,
            "Revision \(revision) is ahead of the store, whose newest revision is \(newest).", newestRevision: newest)
    }

    /// The error for resuming a watch from a revision the store has not reached: one from another
    /// database (or from this one before it was restored from an older copy), whose changes
    /// would never come.
    package static func ahead(since: Revision, newest: Revision) -> PrefsError {
        PrefsError(
            .invalidRequest,
            "Revision \(since) is ahead of the store, whose newest revision is \(newest); it comes from another "
                + "database. Read the current values and watch from their revision, or watch without since.",
            newestRevision: newest)
    }

    /// The error of a conditional preference write whose key is no longer at `expected` at the
    /// scope: `current` is the key there as it is now.
    package static func staleRevision(expected: Revision, current: ScopedPreference) -> PrefsError {
        PrefsError(
            .staleRevision,
            "'\(current.key)' is at revision \(current.revision) at \(current.scope.path), not \(expected); nothing was "
                + "changed. Read it again and base your change on its current value.",
            currentPreference: current)
    }

    /// The error for a request that asked for a revision this host has not taken in within the
    /// wait allowed.
    package static func behind(revision: Revision, applied: Revision) -> PrefsError {
        PrefsError(
            .behind,
            "This host has revision \(applied), not yet \(revision); it is on its way from the database. "
                + "Retry in a moment, or ask another host.",
            appliedRevision: applied)
    }
}

/// A position in the store's history: every committed change gets the next one.
public typealias Revision = Int64
