import Foundation
import HTTPTypes
import Hummingbird
import PrefsKit

/// `GET /v1/watch`: a service's watch as Server-Sent Events.
///
/// Each event is `id: REVISION`, `event: KIND`, `data: JSON`. `since=R` (or the standard
/// `Last-Event-ID: R` header a reconnecting EventSource sends) replays from the change log
/// first. A stream the service ends with an error gets a last `error` event. A stream whose
/// client goes away ends at once (``WatchEndings``), when the service can end its watches.
struct WatchRoute: Sendable {
    let service: any PrefsService
    let endings: WatchEndings

    func register(on router: Router<PrefsRequestContext>) {
        router.get("/v1/watch") { request, context -> Response in
            // Subscribes now, before the answer's head is sent: a client that has the head
            // misses no change made after it, and one that cannot watch gets a status.
            let (events, end) = try await open(try Self.parse(request))
            let connection = context.connection
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    endings.register(end, on: connection)
                    defer { endings.remove(connection) }
                    try await writer.write(ByteBuffer(string: ": watching\n\n"))
                    do {
                        for try await event in events {
                            try await writer.write(ByteBuffer(bytes: ServerSentEvent.encode(event)))
                        }
                    } catch let error as PrefsError {
                        try await writer.write(ByteBuffer(bytes: ServerSentEvent.encode(error)))
                    }
                    try await writer.finish(nil)
                }
            )
        }
    }

    /// The watch, and what ends it (nothing, for a service whose watches cannot be ended from
    /// outside: they end at their next write after the client has gone).
    private func open(_ request: WatchRequest) async throws
        -> (events: AsyncThrowingStream<ChangeEvent, any Error>, end: @Sendable () -> Void)
    {
        if let service = service as? any EndableWatching { return try await service.openEndableWatch(request) }
        return (try await service.openWatch(request), {})
    }

    /// The watch a request asks for (its query, and `Last-Event-ID`).
    static func parse(_ request: Request) throws -> WatchRequest {
        let query = request.uri.queryParameters
        let keys = query.getAll("key").map { String($0) }
        for key in keys { try KeyName.validate(key) }
        var since = try request.integer("since")
        if since == nil, let lastEventID = request.headers[.lastEventID] {
            guard let revision = Int64(lastEventID), revision >= 0 else {
                throw PrefsError(.invalidRequest, "Last-Event-ID must be a revision, not '\(lastEventID)'.")
            }
            since = revision
        }
        return WatchRequest(
            keys: keys,
            prefixes: query.getAll("prefix").map { String($0) },
            scope: try query.get("scope").map { try ScopePath($0) },
            since: since,
            draft: try request.uuid("draft"),
            thread: query.get("thread"),
            account: query.get("account")
        )
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
