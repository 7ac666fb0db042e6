import Foundation
import Hummingbird
import PrefsKit

/// The `/v1` routes for drafts, their attachments and threads, over any ``DraftsService``.
/// Thin: parse, call the service, encode. Changes take the revision they are based on from
/// `If-Match`.
struct DraftRoutes<Context: RequestContext>: Sendable {
    let service: any DraftsService
    let limits: ServerLimits

    func register(on router: Router<Context>) {
        router.get("/v1/drafts") { request, _ -> Response in
            let query = request.uri.queryParameters
            return .json(DraftList(drafts: try await service.drafts(account: query.get("account"), thread: query.get("thread"))))
        }
        router.post("/v1/drafts") { request, _ -> Response in
            var request = request
            let input = try await request.decodeJSONBody(
                DraftInput.self, upTo: limits.maximumRequestBytes, what: "a new draft ({\"account\": ..., \"text\": ...})")
            return .json(try await service.createDraft(input), status: .created)
        }
        router.get("/v1/drafts/{draft}") { _, context -> Response in
            .json(try await service.draft(try context.uuid("draft")))
        }
        router.patch("/v1/drafts/{draft}") { request, context -> Response in
            let id = try context.uuid("draft")
            let ifRevision = try request.ifRevision()
            var request = request
            let patch = try await request.decodeJSONBody(
                DraftPatch.self, upTo: limits.maximumRequestBytes, what: "a draft change ({\"text\": ..., ...})")
            return .json(try await service.updateDraft(id, patch, ifRevision: ifRevision))
        }
        router.delete("/v1/drafts/{draft}") { request, context -> Response in
            .json(try await service.deleteDraft(try context.uuid("draft"), ifRevision: try request.ifRevision()))
        }
        router.get("/v1/drafts/{draft}/validation") { _, context -> Response in
            .json(try await service.validation(of: try context.uuid("draft")))
        }

        router.post("/v1/drafts/{draft}/attachments") { request, context -> Response in
            let result = try await service.addAttachment(
                to: try context.uuid("draft"), try request.attachmentUpload(), ifRevision: try request.ifRevision(),
                bytes: request.bodyStream())
            return .json(result, status: .created)
        }
        router.get("/v1/drafts/{draft}/attachments/{attachment}/data") { _, context -> Response in
            .attachment(try await service.attachmentData(try context.uuid("attachment"), of: try context.uuid("draft")))
        }
        router.patch("/v1/drafts/{draft}/attachments/{attachment}") { request, context -> Response in
            let draft = try context.uuid("draft")
            let attachment = try context.uuid("attachment")
            let ifRevision = try request.ifRevision()
            var request = request
            let patch = try await request.decodeJSONBody(
                AttachmentPatch.self, upTo: limits.maximumRequestBytes, what: "an attachment change ({\"altText\": ..., \"position\": ...})")
            return .json(try await service.updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision))
        }
        router.delete("/v1/drafts/{draft}/attachments/{attachment}") { request, context -> Response in
            .json(
                try await service.removeAttachment(
                    try context.uuid("attachment"), of: try context.uuid("draft"), ifRevision: try request.ifRevision()))
        }

        router.get("/v1/threads/{thread}") { _, context -> Response in
            // The router leaves path segments percent-encoded; a thread id is any text.
            let thread = context.parameters.get("thread")?.removingPercentEncoding ?? ""
            return .json(ThreadDrafts(thread: thread, drafts: try await service.thread(thread)))
        }
    }
}

/// The answer of `GET /v1/drafts`.
struct DraftList: Codable, Sendable {
    var drafts: [Draft]
}

/// The answer of `GET /v1/threads/{thread}`: its drafts in order.
struct ThreadDrafts: Codable, Sendable {
    var thread: String
    var drafts: [Draft]
}
