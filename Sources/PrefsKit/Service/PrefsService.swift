/// The service an application, the CLI and the daemon's HTTP API talk to: preferences
/// (``PreferencesService``), drafts and attachments (``DraftsService``), their history
/// (``HistoryService``), the named tokens that may reach the daemon (``TokensService``), and the
/// watches that tell of every change.
///
/// Three implementations: `EmbeddedStore` (SQLite in this process), `PostgresStore` (a
/// PostgreSQL database several hosts share) and `PrefsClient` (the `prefsd` daemon over its Unix
/// socket). They give the same answers and the same errors (``PrefsError``), so code and tests
/// written against this protocol run against any of them.
public protocol PrefsService: PreferencesService, DraftsService, HistoryService, TokensService, SyncService {
    /// Version, database, current revision, uptime and counts.
    func status() async throws -> ServiceStatus

    /// The changes `request` selects, as they are committed: first those after
    /// `request.since` from the change log, then live ones. Ends with an error `compacted` if
    /// `since` is older than the log keeps; errors that make the watch impossible (an invalid
    /// key, too many watches open, the service closing) end it before any event.
    ///
    /// - Parameter request: What to watch, and from which revision.
    /// - Returns: The change events; the stream ends with a ``PrefsError`` (e.g. `compacted`)
    ///   when the watch cannot go on.
    func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error>

    /// Returns once the service has taken in `revision` (a revision a write answered, through
    /// this service or another host of the same database): at once when it has — always, on a
    /// database with one writer — else after a short wait. Reads made after it see that
    /// revision's changes.
    ///
    /// - Parameter revision: The revision to wait for.
    /// - Throws: ``PrefsError`` — `behind`, with the revision it has
    ///   (``PrefsError/appliedRevision``), if it has not taken it in after the wait.
    func waitForRevision(_ revision: Revision) async throws
}
