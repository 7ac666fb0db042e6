/// What `GET /v1/status` and `prefsctl status` report.
public struct ServiceStatus: Codable, Sendable, Hashable {
    /// Counts of what the store holds.
    public struct Counts: Codable, Sendable, Hashable {
        /// Keys with a value, a lock or a schema.
        public var keys: Int
        /// Values stored, at every scope.
        public var values: Int
        /// Locks.
        public var locks: Int
        /// Registered schemas.
        public var schemas: Int
        /// Volatile overrides (`prefsd --override`).
        public var overrides: Int
        /// Watches open now.
        public var watchers: Int

        /// Counts with every number given.
        ///
        /// - Parameters:
        ///   - keys: Keys with a value, a lock or a schema.
        ///   - values: Values stored, at every scope.
        ///   - locks: Locks.
        ///   - schemas: Registered schemas.
        ///   - overrides: Volatile overrides.
        ///   - watchers: Watches open now.
        public init(keys: Int, values: Int, locks: Int, schemas: Int, overrides: Int, watchers: Int) {
            self.keys = keys
            self.values = values
            self.locks = locks
            self.schemas = schemas
            self.overrides = overrides
            self.watchers = watchers
        }
    }

    /// The prefsd version.
    public var version: String
    /// The database file.
    public var database: String
    /// The newest committed revision.
    public var revision: Revision
    /// The oldest revision the change log still holds (a watch may resume from one before it).
    public var oldestRevision: Revision
    /// Seconds since the store was opened.
    public var uptimeSeconds: Double
    /// The serving process.
    public var pid: Int32
    /// What the store holds.
    public var counts: Counts
    /// Where a replica's sync with its upstream stands; nil for a store that is no replica.
    public var sync: SyncStatus?

    /// A status with every field given.
    ///
    /// - Parameters:
    ///   - version: The prefsd version.
    ///   - database: The database file.
    ///   - revision: The newest committed revision.
    ///   - oldestRevision: The oldest revision the change log still holds.
    ///   - uptimeSeconds: Seconds since the store was opened.
    ///   - pid: The serving process.
    ///   - counts: What the store holds.
    ///   - sync: Where a replica's sync stands.
    public init(
        version: String, database: String, revision: Revision, oldestRevision: Revision, uptimeSeconds: Double,
        pid: Int32, counts: Counts, sync: SyncStatus? = nil
    ) {
        self.version = version
        self.database = database
        self.revision = revision
        self.oldestRevision = oldestRevision
        self.uptimeSeconds = uptimeSeconds
        self.pid = pid
        self.counts = counts
        self.sync = sync
    }
}

/// The version of this build of prefsd and PrefsKit.
public let prefsVersion = "0.1.0"
