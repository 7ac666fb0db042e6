import Foundation
import HTTPTypes
import PrefsEngine
import PrefsKit

/// The endpoints of drafts, their attachments and threads. Changes take the revision they are
/// based on from `If-Match`.
///
/// A draft belongs to its account's scope, `/accounts/ACCOUNT`: a caller whose scope is below `/`
/// reads (and, as a writer, changes) only the drafts of the accounts its scope holds; lists and
/// threads show it only those.
enum DraftEndpoints {
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        /// Throws `forbidden` unless `request` may act as `role` on draft `id` (read first, only
        /// for a caller whose scope is below `/`).
        @Sendable func checkDraft(_ id: UUID, _ role: AccessRole, _ request: EndpointRequest) async throws {
            guard try !request.access().coversEverything else { return }
            try request.checkAccess(role, account: try await engine.draft(id).account)
        }
        /// `drafts` less those of accounts `request` may not read.
        @Sendable func visible(_ drafts: [Draft], to request: EndpointRequest) throws -> [Draft] {
            let grant = try request.access()
            return grant.coversEverything ? drafts : drafts.filter { grant.covers(account: $0.account) }
        }
        return [
            Endpoint(.get, "/v1/drafts") { request in
                let (account, thread) = (request.query["account"], request.query["thread"])
                if let account { try request.checkAccess(.reader, account: account) }
                return .task {
                    .json(DraftList(drafts: try visible(try await engine.drafts(account: account, thread: thread), to: request)))
                }
            },
            Endpoint(.post, "/v1/drafts", body: .whole(limit: limits.maximumRequestBytes), role: .writer) { request in
                let input = try request.decodeBody(DraftInput.self, what: "a new draft ({\"account\": ..., \"text\": ...})")
                try request.checkAccess(.writer, account: input.account)
                return .task { .json(try await engine.createDraft(input, context: request.writeContext), status: .created) }
            },
            Endpoint(.get, "/v1/drafts/{draft}") { request in
                let id = try request.id("draft")
                return .task {
                    let draft = try await engine.draft(id)
                    try request.checkAccess(.reader, account: draft.account)
                    return .json(draft)
                }
            },
            Endpoint(.patch, "/v1/drafts/{draft}", body: .whole(limit: limits.maximumRequestBytes), role: .writer) { request in
                let (id, ifRevision) = (try request.id("draft"), try request.ifRevision())
                let patch = try request.decodeBody(DraftPatch.self, what: "a draft change ({\"text\": ..., ...})")
                return .task {
                    try await checkDraft(id, .writer, request)
                    return .json(try await engine.updateDraft(id, patch, ifRevision: ifRevision, context: request.writeContext))
                }
            },
            Endpoint(.delete, "/v1/drafts/{draft}", role: .writer) { request in
                let (id, ifRevision) = (try request.id("draft"), try request.ifRevision())
                return .task {
                    try await checkDraft(id, .writer, request)
                    return .json(try await engine.deleteDraft(id, ifRevision: ifRevision, context: request.writeContext))
                }
            },
            Endpoint(.get, "/v1/drafts/{draft}/validation") { request in
                let id = try request.id("draft")
                return .task {
                    try await checkDraft(id, .reader, request)
                    return .json(try await engine.validation(of: id))
                }
            },
            Endpoint(.post, "/v1/drafts/{draft}/attachments", body: .streamed, role: .writer) { request in
                let (id, upload, ifRevision) = (try request.id("draft"), try request.attachmentUpload(), try request.ifRevision())
                let bytes = request.bodyStream ?? AsyncThrowingStream { nil }
                return .task {
                    try await checkDraft(id, .writer, request)
                    let added = try await engine.addAttachment(
                        to: id, upload, ifRevision: ifRevision, bytes: bytes, context: request.writeContext)
                    return .json(added, status: .created)
                }
            },
            Endpoint(.get, "/v1/drafts/{draft}/attachments/{attachment}/data") { request in
                let (draft, attachment) = (try request.id("draft"), try request.id("attachment"))
                return .task {
                    try await checkDraft(draft, .reader, request)
                    return .file(try await engine.attachmentData(attachment, of: draft))
                }
            },
            Endpoint(.patch, "/v1/drafts/{draft}/attachments/{attachment}", body: .whole(limit: limits.maximumRequestBytes), role: .writer) {
                request in
                let (draft, attachment, ifRevision) = (try request.id("draft"), try request.id("attachment"), try request.ifRevision())
                let patch = try request.decodeBody(
                    AttachmentPatch.self, what: "an attachment change ({\"altText\": ..., \"position\": ...})")
                return .task {
                    try await checkDraft(draft, .writer, request)
                    return .json(
                        try await engine.updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision, context: request.writeContext))
                }
            },
            Endpoint(.delete, "/v1/drafts/{draft}/attachments/{attachment}", role: .writer) { request in
                let (draft, attachment, ifRevision) = (try request.id("draft"), try request.id("attachment"), try request.ifRevision())
                return .task {
                    try await checkDraft(draft, .writer, request)
                    return .json(
                        try await engine.removeAttachment(attachment, of: draft, ifRevision: ifRevision, context: request.writeContext))
                }
            },
            Endpoint(.get, "/v1/threads/{thread}") { request in
                let thread = request.parameters["thread"] ?? ""
                return .task { .json(ThreadDrafts(thread: thread, drafts: try visible(try await engine.thread(thread), to: request))) }
            },
        ]
    }
}
