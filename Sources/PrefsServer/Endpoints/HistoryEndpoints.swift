import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// Who changed what and when, and putting it back: a key's history at a scope, the audit log,
/// diffs and reverts. (Reads in the past are the `atRevision` of the preference reads.) A caller
/// whose scope is below `/` reads the audit log of its scope only.
enum HistoryEndpoints {
    /// The endpoints, answering from `engine` within `limits`.
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/v1/prefs/{key}/history") { request in
                let (key, scope, before) = (try request.key(), try request.scope(), try request.integer("before"))
                let limit = Int(try request.integer("limit") ?? 20)
                return .task { .json(try await engine.history(of: key, scope: scope, limit: limit, before: before)) }
            },
            Endpoint(.get, "/v1/changes") { request in
                let query = try changeQuery(request)
                let format = request.query["format"] ?? "json"
                guard ["json", "jsonl", "csv"].contains(format) else {
                    throw PrefsError(.invalidRequest, "format takes json, jsonl or csv, not '\(format.prefix(20))'.")
                }
                return .task {
                    let page = try await engine.changes(query)
                    var answer: Answer
                    switch format {
                    case "jsonl":
                        var lines = ByteBuffer()
                        for change in page.changes {
                            lines.writeBytes(JSONCoding.encoded(change))
                            lines.writeString("\n")
                        }
                        answer = .whole(lines, type: "application/jsonl")
                    case "csv":
                        let lines = [ChangeRecord.csvHeader] + page.changes.map(\.csvLine)
                        answer = .whole(ByteBuffer(string: lines.map { $0 + "\r\n" }.joined()), type: "text/csv; charset=utf-8")
                    default:
                        answer = .json(page)
                    }
                    if let next = page.next {
                        var items = next.queryItems
                        if format != "json" { items.append(("format", format)) }
                        let target = "/v1/changes?" + items.map { "\($0.name)=\(PercentEncoding.queryValue($0.value))" }.joined(separator: "&")
                        answer.fields.append(HTTPField(name: Self.link, value: "<\(target)>; rel=\"next\""))
                    }
                    return answer
                }
            },
            Endpoint(.get, "/v1/diff") { request in
                guard let from = try request.integer("from") else {
                    throw PrefsError(.invalidRequest, "A diff needs from=REVISION (and to=REVISION, or now).")
                }
                let (to, scope, prefix) = (try request.integer("to"), try request.scope(), request.query["prefix"])
                return .task { .json(try await engine.diff(from: from, to: to, scope: scope, prefix: prefix)) }
            },
            Endpoint(.post, "/v1/prefs:revert", body: .whole(limit: limits.maximumRequestBytes), role: .writer) { request in
                let body = try request.decodeBody(RevertRequest.self, what: "a revert ({\"key\" or \"prefix\", \"scope\", \"toRevision\"})")
                try request.checkAccess(.writer, at: body.scope)
                let (target, ifRevision) = (try body.target(), try request.ifRevision())
                return .task {
                    .json(
                        try await engine.revert(
                            target, scope: body.scope, to: body.toRevision, ifRevision: ifRevision, context: request.writeContext))
                }
            },
        ]
    }

    /// The header naming the next page.
    private static let link = HTTPField.Name("Link")!

    /// The audit log's query from `request`'s query items.
    private static func changeQuery(_ request: EndpointRequest) throws -> ChangeQuery {
        var query = ChangeQuery(
            prefix: request.query["prefix"], scope: try request.query["scope"].map { try ScopePath($0) },
            author: request.query["author"], since: try request.query["since"].map(ChangeQuery.Bound.init),
            until: try request.query["until"].map(ChangeQuery.Bound.init))
        if let limit = try request.integer("limit") { query.limit = Int(clamping: limit) }
        if let order = request.query["order"] {
            guard let parsed = ChangeQuery.Order(rawValue: order) else {
                throw PrefsError(.invalidRequest, "order takes desc (newest first) or asc, not '\(order.prefix(20))'.")
            }
            query.order = parsed
        }
        try query.check()
        let grant = try request.access()
        if !grant.coversEverything {
            query.scope = query.scope ?? grant.scope
            try request.checkAccess(.reader, at: query.scope!)
        }
        return query
    }
}
