import HTTPTypes
import PrefsEngine
import PrefsKit

/// `GET /v1/watch`: a watch as Server-Sent Events.
///
/// Each event is `id: REVISION`, `event: KIND`, `data: JSON`. `since=R` (or the standard
/// `Last-Event-ID: R` header a reconnecting EventSource sends) replays from the change log
/// first. The watch is subscribed before the answer's head is sent: a client that has the head
/// misses no change made after it, and one that cannot watch (a bad query, too many watches, a
/// compacted `since`) gets a status instead — for a `since` older than the change log, the head
/// waits until the engine has read what compaction dropped (``API`` waits for the feed to
/// open). A stream the engine ends with an error gets a last `error` event.
///
/// A watch opened with a named token sees only what the token's scope holds (its `scope` and
/// `account` must be there; other changes outside it are left out), and ends with a `revoked`
/// event when the token is revoked.
enum WatchEndpoint {
    static func endpoint(engine: any EngineServing) -> Endpoint {
        Endpoint(.get, "/v1/watch", waitsForRevision: false) { request in
            var watch = try watchRequest(request)
            let grant = try request.access()
            if let scope = watch.scope { try request.checkAccess(.reader, at: scope) }
            if let account = watch.account { try request.checkAccess(.reader, account: account) }
            if grant.token != nil || !grant.coversEverything { watch.grant = grant }
            return .events(try engine.openWatchFeed(watch))
        }
    }

    /// The watch a request asks for (its query, and `Last-Event-ID`).
    static func watchRequest(_ request: EndpointRequest) throws -> WatchRequest {
        let query = request.query
        let keys = query.all("key")
        // A malformed Last-Event-ID is refused even beside `since`, which wins over a good one.
        let lastEventID = try request.headers[.lastEventID].map { text in
            guard let revision = Int64(text), revision >= 0 else {
                throw PrefsError(.invalidRequest, "Last-Event-ID must be a revision, not '\(text)'.")
            }
            return revision
        }
        let since = try request.integer("since") ?? lastEventID
        return WatchRequest(
            keys: keys, prefixes: query.all("prefix"), scope: try query["scope"].map { try ScopePath($0) }, since: since,
            draft: try request.queryID("draft"), thread: query["thread"], account: query["account"])
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
