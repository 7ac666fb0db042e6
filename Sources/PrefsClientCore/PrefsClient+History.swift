import Foundation
import PrefsKit

/// History, the audit log, reads in the past, diffs and reverts, over the daemon's API.
extension PrefsClient {
    public func history(of key: KeyName, scope: ScopePath, limit: Int, before: Revision?) async throws -> PreferenceHistory {
        try await call(
            "GET", "/v1/prefs/\(key)/history",
            query: ["scope": scope.path, "limit": String(limit), "before": before.map(String.init)])
    }

    public func changes(_ query: ChangeQuery) async throws -> ChangePage {
        let items = query.queryItems
        let target = Self.target("/v1/changes", query: items.map { ($0.name, $0.value) })
        let spec = HTTPRequestSpec(method: "GET", target: target)
        return try Self.decode(try await exchange(spec, send: transport.send), answering: spec)
    }

    public func resolve(_ key: KeyName, scope: ScopePath, explain: Bool, atRevision revision: Revision) async throws
        -> ResolvedPreference
    {
        try await call(
            "GET", "/v1/prefs/\(key)",
            query: ["scope": scope.path, "explain": explain ? "1" : nil, "atRevision": String(revision)])
    }

    public func list(scope: ScopePath, prefix: String?, atRevision revision: Revision) async throws -> [ResolvedPreference] {
        struct Answer: Decodable { var preferences: [ResolvedPreference] }
        let answer: Answer = try await call(
            "GET", "/v1/prefs", query: ["scope": scope.path, "prefix": prefix, "atRevision": String(revision)])
        return answer.preferences
    }

    public func dump(scope: ScopePath, atRevision revision: Revision) async throws -> PrefsDump {
        try await call("GET", "/v1/dump", query: ["scope": scope.path, "atRevision": String(revision)])
    }

    public func diff(from: Revision, to: Revision?, scope: ScopePath, prefix: String?) async throws -> PreferenceDiff {
        try await call(
            "GET", "/v1/diff",
            query: ["from": String(from), "to": to.map(String.init), "scope": scope.path, "prefix": prefix])
    }

    @discardableResult
    public func revert(_ target: RevertTarget, scope: ScopePath, to revision: Revision, ifRevision: Revision?) async throws
        -> WriteResult
    {
        let request: RevertRequest
        switch target {
        case .key(let key): request = RevertRequest(key: key.rawValue, scope: scope, toRevision: revision)
        case .prefix(let prefix): request = RevertRequest(prefix: prefix, scope: scope, toRevision: revision)
        }
        return try await call("POST", "/v1/prefs:revert", body: try Self.encoder.encode(request), headers: Self.ifMatch(ifRevision))
    }
}
