import Foundation
import PrefsKit

/// Where an application's call enters the engine: each write of ``PrefsService`` made in the
/// context the calling task gives it — the reason ``PrefsService/withReason(_:_:)`` set, read
/// here once, and the store's configured author. The server calls the engine's methods that take
/// a ``WriteContext`` directly, with the context it built from the request.
extension PrefsEngine {
    /// The context of a library call: the reason the calling task runs under, if any.
    var libraryCall: WriteContext {
        WriteContext(origin: ChangeOrigin.current ?? ChangeOrigin())
    }

    @discardableResult
    public func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws
        -> WriteResult
    {
        try await set(key, to: value, scope: scope, ifRevision: ifRevision, context: libraryCall)
    }

    @discardableResult
    public func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult {
        try await reset(key, scope: scope, recursive: recursive, ifRevision: ifRevision, context: libraryCall)
    }

    @discardableResult
    public func apply(_ batch: PreferenceBatch) async throws -> WriteResult {
        try await apply(batch, context: libraryCall)
    }

    @discardableResult
    public func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await lock(key, scope: scope, ifRevision: ifRevision, context: libraryCall)
    }

    @discardableResult
    public func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await unlock(key, scope: scope, ifRevision: ifRevision, context: libraryCall)
    }

    @discardableResult
    public func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult {
        try await register(schemas: schemas, context: libraryCall)
    }

    @discardableResult
    public func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult {
        try await load(dump, replacing: replacing, context: libraryCall)
    }

    public func createDraft(_ input: DraftInput) async throws -> Draft {
        try await createDraft(input, context: libraryCall)
    }

    public func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft {
        try await updateDraft(id, patch, ifRevision: ifRevision, context: libraryCall)
    }

    @discardableResult
    public func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult {
        try await deleteDraft(id, ifRevision: ifRevision, context: libraryCall)
    }

    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        try await addAttachment(to: draft, upload, ifRevision: ifRevision, bytes: bytes, context: libraryCall)
    }

    public func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult
    {
        try await updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision, context: libraryCall)
    }

    public func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft {
        try await removeAttachment(attachment, of: draft, ifRevision: ifRevision, context: libraryCall)
    }

    public func revert(_ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?) async throws
        -> WriteResult
    {
        try await revert(target, scope: scope, to: revision, ifRevision: ifRevision, context: libraryCall)
    }

    public func createToken(named name: String, role: AccessRole, scope: ScopePath) async throws -> CreatedAccessToken {
        try await createToken(named: name, role: role, scope: scope, context: libraryCall)
    }

    @discardableResult
    public func revokeToken(named name: String) async throws -> WriteResult {
        try await revokeToken(named: name, context: libraryCall)
    }
}
