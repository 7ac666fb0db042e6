import CoreMetrics
import PrefsKit

/// How an ``EmbeddedStore`` opens its database and what it enforces.
public struct StoreConfiguration: Sendable {
    /// When a commit is synced to disk.
    public enum Durability: String, Sendable, CaseIterable {
        /// Every commit is synced (`synchronous=FULL`): an acknowledged write survives a crash of
        /// the process and a power loss.
        case full
        /// The WAL is synced at checkpoints (`synchronous=NORMAL`): an acknowledged write survives
        /// a crash of the process, but the last commits can be lost on power loss.
        case normal
    }

    /// Sync policy; `.full` by default.
    public var durability: Durability = .full
    /// The checks every preference write passes: the knobs below, in the form the engine runs.
    package var rules: PreferenceWriteRules = .standard
    /// The largest value accepted, in bytes of canonical JSON (`--max-value-bytes`); 64 KiB by
    /// default.
    public var maximumValueBytes: Int {
        get { rules.maximumValueBytes }
        set { rules.maximumValueBytes = newValue }
    }
    /// Whether keys without a schema are refused (`--strict`); false by default.
    public var strict: Bool {
        get { rules.strict }
        set { rules.strict = newValue }
    }
    /// The most operations one batch may hold (`--max-batch-operations`); 10 000 by default.
    public var maximumBatchOperations: Int {
        get { rules.maximumBatchOperations }
        set { rules.maximumBatchOperations = newValue }
    }
    /// Volatile overrides (`prefsd --override KEY=JSON`): they win over everything, are never stored.
    public var overrides: [String: JSONValue] = [:]
    /// How many changes the change log keeps at least (`--retain-changes`); it drops older ones
    /// in steps of `retainChanges / 32`.
    public var retainChanges: Int = 100_000
    /// How long the change log keeps changes at least, whatever their number (`--retain-for`):
    /// history and the audit log reach this far back. Nil by default: the log keeps
    /// ``retainChanges`` changes. Either way, the changes that set what is stored now are kept.
    public var retainFor: Duration?
    /// Who the changes made through this store are by, when no server names the author: by
    /// default this process's user and program (``ChangeAuthor/currentProcess``).
    public var author: ChangeAuthor = .currentProcess
    /// Whether changes record who made them and why (`prefsd --no-authors` turns it off): true
    /// by default. Off, the log keeps no user names — history and the audit log show `unknown`.
    public var recordsAuthors = true
    /// How many watches may be open at once (`--max-watches`); one more is refused with
    /// `limit_reached`.
    public var maximumWatches: Int = 50_000
    /// How many undelivered events a watcher may have queued before its watch ends with `overflow`.
    public var watchBufferLimit: Int = 10_000
    /// The largest attachment accepted, in bytes (`--max-attachment-bytes`); 100 MiB by default.
    public var maximumAttachmentBytes: Int64 = 100 * 1024 * 1024
    /// How long a request that names a revision this host has not taken in yet (`minRevision`, a
    /// watch's `since` on a shared database) waits for it before the answer is `behind`.
    public var revisionWait: Duration = .seconds(2)
    /// How long the outcome of a write sent with an `Idempotency-Key` is kept, so that the same
    /// request sent again gets it (`--idempotency-retention`); 24 hours by default, as payment
    /// APIs keep theirs. Older ones are pruned as writes commit.
    public var idempotencyRetention: Duration = .seconds(24 * 60 * 60)
    /// How long a blob sent by its hash (`PATCH /v1/blobs/{sha256}`) is kept: an upload cut off
    /// and left alone that long is dropped, and so is a whole blob uploaded that long ago that no
    /// attachment uses; 24 hours by default. Pruned as writes commit.
    public var blobUploadRetention: Duration = .seconds(24 * 60 * 60)
    /// How often quiet watches get a `progress` event with the current revision.
    public var progressInterval: Duration = .seconds(15)
    /// How often when named tokens were last used is written to the storage (it is kept in memory
    /// between): a minute by default, so `token list` is right to the minute.
    public var tokenUseInterval: Duration = .seconds(60)
    /// The upstream prefsd this store is a replica of (its URL), or nil. A replica keeps an
    /// outbox of its local changes from its first write on, and syncs them once it is given a
    /// way to reach the upstream. A store that has been a replica stays one when opened without
    /// an upstream: its local changes wait in the outbox for its next sync.
    public var upstream: String?
    /// What makes the engine's metrics (commits, watches, the change log; see `GET /v1/metrics`):
    /// none by default. Given here rather than taken from the process's `MetricsSystem`, so that
    /// engines in one process (tests) each keep their own.
    public var metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance

    /// prefsd's defaults (README, prefsd).
    public init() {}
}
