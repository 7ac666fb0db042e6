import Foundation
import HTTPTypes
import PrefsEngine
import PrefsKit

/// Sync across devices, both sides: an upstream serves its devices' exchanges
/// (`POST /v1/sync`) and lists the conflicts it resolved (`GET /v1/conflicts`); a device daemon
/// (`prefsd --upstream`) says where its sync stands (`GET /v1/sync`) and syncs at once when
/// asked (`POST /v1/sync:now`).
enum SyncEndpoints {
    /// The longest a device may ask the upstream to hold an exchange's answer (a long poll), in
    /// milliseconds.
    static let longestWait = 60_000
    /// How long `POST /v1/sync:now` waits without a `timeout`, and the longest it may be given,
    /// in seconds.
    static let defaultSyncTimeout: Int64 = 30
    static let longestSyncTimeout: Int64 = 600
    /// How many conflicts one answer holds without a `limit`, and at most.
    static let defaultConflictLimit = 100
    static let maximumConflictLimit = 10_000

    /// The endpoints, answering from `engine` within `limits`.
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        [
            // A device's exchange: a reader may pull (the engine refuses its push), and only a
            // named token is a device (the engine refuses anyone else).
            Endpoint(.post, "/v1/sync", body: .whole(limit: limits.maximumRequestBytes), waitsForRevision: false) { request in
                let exchange = try request.decodeBody(
                    SyncRequest.self, what: "a sync request ({\"cursor\", \"mutations\": [...], \"wait\"})")
                try checkWait(exchange)
                let grant = try request.access()
                let context = request.writeContext
                return .task { .json(try await engine.exchange(exchange, grant: grant, context: context)) }
            },
            // The same exchanges, many on one connection (SyncStream).
            Endpoint(.post, "/v1/sync:stream", body: .streamed, waitsForRevision: false) { request in
                .now(try SyncStream(request, engine: engine, limits: limits).answer(acceptEncoding: request.headers[.acceptEncoding]))
            },
            Endpoint(.get, "/v1/conflicts") { request in
                let query = try conflictQuery(request)
                return .task { .json(ConflictList(conflicts: try await engine.conflicts(query))) }
            },
            // A conflict's loser put back: the caller must be a writer at the conflict's scope.
            Endpoint(.post, "/v1/conflicts/{revision}/restore", role: .writer) { request in
                guard let revision = Revision(request.parameters["revision"] ?? ""), revision > 0 else {
                    throw PrefsError(.invalidRequest, "A conflict is named by its revision, a number from 1.")
                }
                let loser = try request.integer("loser") ?? 0
                guard (0...1000).contains(loser) else {
                    throw PrefsError(.invalidRequest, "loser counts a conflict's losers from 0 (at most 1000), not \(loser).")
                }
                let (grant, context, action) = (try request.access(), request.writeContext, request.action)
                return .task {
                    let conflict = try await engine.conflict(at: revision)
                    try grant.check(.writer, at: conflict.scope, for: action)
                    return .json(try await engine.restoreLoser(of: conflict, loser: Int(loser), context: context))
                }
            },
            Endpoint(.get, "/v1/sync") { _ in
                guard let status = engine.replicaStatus else {
                    throw PrefsError(.notFound, "This prefsd has no upstream: it is started without --upstream, so it does not sync.")
                }
                return .now(.json(status))
            },
            Endpoint(.post, "/v1/sync:now", role: .admin, storeWide: true) { request in
                let seconds = try request.integer("timeout") ?? Self.defaultSyncTimeout
                guard (1...Self.longestSyncTimeout).contains(seconds) else {
                    throw PrefsError(.invalidRequest, "timeout takes 1 to \(Self.longestSyncTimeout) seconds, not \(seconds).")
                }
                guard engine.replicaStatus != nil else {
                    throw PrefsError(.notFound, "This prefsd has no upstream: it is started without --upstream, so it does not sync.")
                }
                return .task { .json(try await engine.syncNow(timeout: .seconds(seconds))) }
            },
        ]
    }

    /// Throws `invalid_request` for a long poll longer than ``longestWait``.
    static func checkWait(_ exchange: SyncRequest) throws {
        if let wait = exchange.wait, !(0...longestWait).contains(wait) {
            throw PrefsError(.invalidRequest, "wait takes 0 to \(longestWait) milliseconds, not \(wait).")
        }
    }

    /// The conflicts' query from `request`'s query items; a caller whose scope is below `/`
    /// reads those at or below its scope only.
    private static func conflictQuery(_ request: EndpointRequest) throws -> ConflictQuery {
        var query = ConflictQuery(limit: defaultConflictLimit)
        query.subtree = try request.query["scope"].map { try ScopePath($0) }
        query.key = try request.query["key"].map { try KeyName($0).rawValue }
        query.after = try request.integer("since")
        if let from = request.query["from"] {
            guard let date = WireJSON.date(from: from) else {
                throw PrefsError(
                    .invalidRequest, "from takes an RFC 3339 time, such as 2026-11-27T02:00:00Z, not '\(from.prefix(60))'.")
            }
            query.from = date.timeIntervalSince1970
        }
        if let limit = try request.integer("limit") {
            guard (1...Int64(maximumConflictLimit)).contains(limit) else {
                throw PrefsError(.invalidRequest, "limit takes 1 to \(maximumConflictLimit) conflicts, not \(limit).")
            }
            query.limit = Int(limit)
        }
        if let order = request.query["order"] {
            switch order {
            case "newest": query.newestFirst = true
            case "oldest": query.newestFirst = false
            default: throw PrefsError(.invalidRequest, "order takes newest or oldest (the default), not '\(order.prefix(20))'.")
            }
        }
        let grant = try request.access()
        if !grant.coversEverything {
            query.subtree = query.subtree ?? grant.scope
            try request.checkAccess(.reader, at: query.subtree!)
        }
        return query
    }
}
