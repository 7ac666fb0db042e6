import Foundation
import PrefsKit

/// What the daemon's HTTP server asks of an engine beyond ``PrefsService``: answers it can give
/// on a connection's own thread, without a task — a read from memory, a write that reports to a
/// completion, a watch read as a feed. An interface between the engine and the server, not part
/// of the API an application sees.
package protocol EngineServing: PrefsService {
    /// ``PrefsService/resolve(_:scope:explain:)`` for a valid key, answered at once from memory,
    /// with the key's revision at `scope` (``KeyState/revision(at:)``) read in the same view.
    func resolveNowWithRevision(_ key: KeyName, scope: ScopePath, explain: Bool) -> (resolved: ResolvedPreference, revisionHere: Revision)

    /// Whether changes record their author and reason: when not, the server need not work them out.
    var recordsAuthors: Bool { get }

    /// The revision of the newest change reads see; it changes with every change taken in,
    /// before a commit is acknowledged.
    var committedRevision: Revision { get }

    /// ``PrefsService/set(_:to:scope:ifRevision:)`` made in `context`, reporting to `completion`
    /// once the change has committed, or with the error that stopped it. With `committingHere`, a
    /// write that finds the writer idle commits on the calling thread, where the storage allows,
    /// and `completion` runs there before `set` returns; otherwise `completion` runs on the
    /// engine's own thread.
    func set(
        _ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, context: WriteContext,
        committingHere: Bool, then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void)

    // MARK: Writes in a request's context
    //
    // ``PrefsService``'s writes, each made in the context the server built from the request
    // (its author, reason and `Idempotency-Key`).

    /// ``PrefsService/set(_:to:scope:ifRevision:)`` made in `context`.
    func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, context: WriteContext)
        async throws -> WriteResult
    /// ``PrefsService/reset(_:scope:recursive:ifRevision:)`` made in `context`.
    func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?, context: WriteContext)
        async throws -> WriteResult
    /// ``PrefsService/apply(_:)`` made in `context`.
    func apply(_ batch: PreferenceBatch, context: WriteContext) async throws -> WriteResult
    /// ``PrefsService/lock(_:scope:ifRevision:)`` made in `context`.
    func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?, context: WriteContext) async throws -> WriteResult
    /// ``PrefsService/unlock(_:scope:ifRevision:)`` made in `context`.
    func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?, context: WriteContext) async throws -> WriteResult
    /// ``PrefsService/register(schemas:)`` made in `context`.
    func register(schemas: [String: PreferenceSchema], context: WriteContext) async throws -> WriteResult
    /// ``PrefsService/load(_:replacing:)`` made in `context`.
    func load(_ dump: PrefsDump, replacing: Bool, context: WriteContext) async throws -> WriteResult
    /// ``DraftsService/createDraft(_:)`` made in `context`.
    func createDraft(_ input: DraftInput, context: WriteContext) async throws -> Draft
    /// ``DraftsService/updateDraft(_:_:ifRevision:)`` made in `context`.
    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?, context: WriteContext) async throws -> Draft
    /// ``DraftsService/deleteDraft(_:ifRevision:)`` made in `context`.
    func deleteDraft(_ id: UUID, ifRevision: Int64?, context: WriteContext) async throws -> WriteResult
    /// ``DraftsService/addAttachment(to:_:ifRevision:bytes:)`` made in `context`.
    func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>,
        context: WriteContext
    ) async throws -> AttachmentResult
    /// ``DraftsService/updateAttachment(_:of:_:ifRevision:)`` made in `context`.
    func updateAttachment(
        _ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?, context: WriteContext
    ) async throws -> AttachmentResult
    /// ``DraftsService/removeAttachment(_:of:ifRevision:)`` made in `context`.
    func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?, context: WriteContext)
        async throws -> Draft
    /// ``HistoryService/revert(_:scope:to:ifRevision:)`` made in `context`.
    func revert(
        _ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?, context: WriteContext
    ) async throws -> WriteResult
    /// ``TokensService/createToken(named:role:scope:)`` made in `context`.
    func createToken(named name: String, role: AccessRole, scope: ScopePath, context: WriteContext) async throws
        -> CreatedAccessToken
    /// ``TokensService/revokeToken(named:)`` made in `context`.
    func revokeToken(named name: String, context: WriteContext) async throws -> WriteResult

    // MARK: Blobs

    /// ``PrefsEngine/blobState(_:grant:)``: where a blob stands for a caller.
    func blobState(_ sha256: String, grant: AccessGrant) async throws -> BlobState
    /// ``PrefsEngine/blobData(_:grant:)``: a blob's size and bytes, as they are read.
    func blobData(_ sha256: String, grant: AccessGrant) async throws -> (byteSize: Int64, bytes: AsyncThrowingStream<Data, any Error>)
    /// ``PrefsEngine/uploadBlob(_:offset:length:grant:bytes:)``: a blob's bytes taken in from an
    /// offset; how many it holds then.
    func uploadBlob(
        _ sha256: String, offset: Int64, length: Int64, grant: AccessGrant, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64

    // MARK: Sync

    /// ``PrefsEngine/exchange(_:grant:context:)``: one exchange of a device, served.
    func exchange(_ request: SyncRequest, grant: AccessGrant, context: WriteContext) async throws -> SyncAnswer
    /// Returns once the engine starts to stop (its watches and long polls end then): what a
    /// stream of exchanges waits for, to end with them.
    func waitUntilStopping() async
    /// The conflicts sync recorded that `query` selects.
    func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict]
    /// Where the store's sync with its upstream stands; nil for a store that is no replica.
    var replicaStatus: SyncStatus? { get }
    /// The conflict recorded at `revision`; `not_found` if none was.
    func conflict(at revision: Revision) async throws -> SyncConflict
    /// ``SyncService/restoreLoser(ofConflict:loser:)`` of `conflict`, made in `context`.
    func restoreLoser(of conflict: SyncConflict, loser: Int, context: WriteContext) async throws -> WriteResult
    /// Exchanges with the upstream until in step, or `timeout` passes.
    func syncNow(timeout: Duration) async throws -> SyncStatus

    /// Brings the engine's gauges up to date, before its metrics are read.
    func refreshMetrics() async

    /// Subscribes `request` now, or throws why it cannot be (an invalid key, a draft watch's
    /// `since` already compacted, too many watches open, the engine closing). Whether a
    /// preference watch resumed from before the change log lost a change it follows is known
    /// once the engine has read the log: its feed opens then (``WatchFeed/whenOpen(_:)``).
    func openWatchFeed(_ request: WatchRequest) throws -> any WatchFeed

    /// What a request carrying `secret` (the bytes after `Bearer `) may do: nil if no named
    /// token has it. From memory, without a database round trip.
    func grant(forSecret secret: [UInt8]) -> AccessGrant?

    /// The named token `name`, as this engine has taken it in; nil if there is none.
    func token(named name: String) -> AccessToken?

    /// `key` evaluated as an OpenFeature flag at `scope`; nil when it has no value there and no
    /// default.
    func evaluateFlag(_ key: String, at scope: ScopePath) -> FlagEvaluation?

    /// Every key starting with `prefix` (every key, without one) evaluated as a flag at `scope`.
    func evaluateFlags(prefix: String?, at scope: ScopePath) -> [FlagEvaluation]
}
