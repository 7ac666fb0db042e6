import HTTPTypes
import PrefsKit

/// The endpoints of drafts, their attachments and threads. Changes take the revision they are
/// based on from `If-Match`.
enum DraftEndpoints {
    static func all(service: any DraftsService, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/v1/drafts") { request in
                let (account, thread) = (request.query["account"], request.query["thread"])
                return .task { .json(DraftList(drafts: try await service.drafts(account: account, thread: thread))) }
            },
            Endpoint(.post, "/v1/drafts", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let input = try request.decodeBody(DraftInput.self, what: "a new draft ({\"account\": ..., \"text\": ...})")
                return .task { .json(try await service.createDraft(input), status: .created) }
            },
            Endpoint(.get, "/v1/drafts/{draft}") { request in
                let id = try request.id("draft")
                return .task { .json(try await service.draft(id)) }
            },
            Endpoint(.patch, "/v1/drafts/{draft}", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let (id, ifRevision) = (try request.id("draft"), try request.ifRevision())
                let patch = try request.decodeBody(DraftPatch.self, what: "a draft change ({\"text\": ..., ...})")
                return .task { .json(try await service.updateDraft(id, patch, ifRevision: ifRevision)) }
            },
            Endpoint(.delete, "/v1/drafts/{draft}") { request in
                let (id, ifRevision) = (try request.id("draft"), try request.ifRevision())
                return .task { .json(try await service.deleteDraft(id, ifRevision: ifRevision)) }
            },
            Endpoint(.get, "/v1/drafts/{draft}/validation") { request in
                let id = try request.id("draft")
                return .task { .json(try await service.validation(of: id)) }
            },
            Endpoint(.post, "/v1/drafts/{draft}/attachments", body: .streamed) { request in
                let (id, upload, ifRevision) = (try request.id("draft"), try request.attachmentUpload(), try request.ifRevision())
                let bytes = request.bodyStream ?? AsyncThrowingStream { nil }
                return .task {
                    .json(try await service.addAttachment(to: id, upload, ifRevision: ifRevision, bytes: bytes), status: .created)
                }
            },
            Endpoint(.get, "/v1/drafts/{draft}/attachments/{attachment}/data") { request in
                let (draft, attachment) = (try request.id("draft"), try request.id("attachment"))
                return .task { .file(try await service.attachmentData(attachment, of: draft)) }
            },
            Endpoint(.patch, "/v1/drafts/{draft}/attachments/{attachment}", body: .whole(limit: limits.maximumRequestBytes)) {
                request in
                let (draft, attachment, ifRevision) = (try request.id("draft"), try request.id("attachment"), try request.ifRevision())
                let patch = try request.decodeBody(
                    AttachmentPatch.self, what: "an attachment change ({\"altText\": ..., \"position\": ...})")
                return .task { .json(try await service.updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision)) }
            },
            Endpoint(.delete, "/v1/drafts/{draft}/attachments/{attachment}") { request in
                let (draft, attachment, ifRevision) = (try request.id("draft"), try request.id("attachment"), try request.ifRevision())
                return .task { .json(try await service.removeAttachment(attachment, of: draft, ifRevision: ifRevision)) }
            },
            Endpoint(.get, "/v1/threads/{thread}") { request in
                let thread = request.parameters["thread"] ?? ""
                return .task { .json(ThreadDrafts(thread: thread, drafts: try await service.thread(thread))) }
            },
        ]
    }
}
