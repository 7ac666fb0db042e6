import Foundation

/// The service of ``PrefsContext/missing``: there is none, so every call throws the error that
/// says how to give the code a context. It lets a wrapper created outside every context report
/// that error (`$property.error`, and from its setters) instead of stopping the program.
struct MissingContextService: PrefsService {
    let error: PrefsError

    func status() async throws -> ServiceStatus { throw error }
    func conflicts(
        scope: ScopePath?, key: KeyName?, since: Revision?, from: Date?, limit: Int?, newestFirst: Bool
    ) async throws -> [SyncConflict] { throw error }
    func syncStatus() async throws -> SyncStatus { throw error }
    func syncNow(timeout: Duration) async throws -> SyncStatus { throw error }
    func restoreLoser(ofConflict conflict: Revision, loser: Int) async throws -> WriteResult { throw error }
    func waitForRevision(_ revision: Revision) async throws { throw error }
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference { throw error }
    func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference] { throw error }
    func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult { throw error }
    func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult { throw error }
    func apply(_ batch: PreferenceBatch) async throws -> WriteResult { throw error }
    func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult { throw error }
    func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult { throw error }
    func schemas() async throws -> [String: PreferenceSchema] { throw error }
    func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult { throw error }
    func dump(scope: ScopePath) async throws -> PrefsDump { throw error }
    func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult { throw error }

    func history(of key: KeyName, scope: ScopePath, limit: Int, before: Revision?) async throws -> PreferenceHistory { throw error }
    func changes(_ query: ChangeQuery) async throws -> ChangePage { throw error }
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool, atRevision revision: Revision) async throws -> ResolvedPreference {
        throw error
    }
    func list(scope: ScopePath, prefix: String?, atRevision revision: Revision) async throws -> [ResolvedPreference] { throw error }
    func dump(scope: ScopePath, atRevision revision: Revision) async throws -> PrefsDump { throw error }
    func diff(from: Revision, to: Revision?, scope: ScopePath, prefix: String?) async throws -> PreferenceDiff { throw error }
    func revert(_ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?) async throws -> WriteResult {
        throw error
    }

    func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: error) }
    }

    func createToken(named name: String, role: AccessRole, scope: ScopePath) async throws -> CreatedAccessToken { throw error }
    func tokens() async throws -> [AccessToken] { throw error }
    func revokeToken(named name: String) async throws -> WriteResult { throw error }
    func drafts(account: String?, thread: String?) async throws -> [Draft] { throw error }
    func draft(_ id: UUID) async throws -> Draft { throw error }
    func createDraft(_ input: DraftInput) async throws -> Draft { throw error }
    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft { throw error }
    func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult { throw error }
    func validation(of id: UUID) async throws -> DraftValidation { throw error }
    func thread(_ id: String) async throws -> [Draft] { throw error }

    func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        throw error
    }

    func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult
    {
        throw error
    }

    func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft { throw error }
    func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload { throw error }
}
