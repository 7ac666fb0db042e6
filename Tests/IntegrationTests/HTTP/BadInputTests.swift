import Foundation
import PrefsClient
import PrefsKit
import Testing

/// Bad requests get a clear error with a fitting status — never a 500 — and change nothing.
@Suite struct BadInputTests {
    @Test func everyBadRequestIsA4xxAndChangesNothing() async throws {
        let daemon = try await Daemon(arguments: ["--max-value-bytes", "1024"])
        let client = daemon.client
        try await client.register(schemas: ["ui.size": PreferenceSchema(type: .int, minimum: 1, maximum: 10)])
        try await client.set("locked.key", to: 1, scope: "/a")
        try await client.lock("locked.key", scope: "/a")
        let revision = try await client.status().revision

        let longKey = "a." + String(repeating: "b", count: 300)
        let cases: [(String, String, String?, Int, String)] = [
            ("PUT", "/v1/prefs/ok.key", "{bad json", 400, "invalid_json"),
            ("PUT", "/v1/prefs/ok.key", "", 400, "invalid_json"),
            ("PUT", "/v1/prefs/Bad.Key", "1", 400, "invalid_key"),
            ("PUT", "/v1/prefs/a..b", "1", 400, "invalid_key"),
            ("PUT", "/v1/prefs/\(longKey)", "1", 400, "invalid_key"),
            ("PUT", "/v1/prefs/ok.key?scope=nope", "1", 400, "invalid_scope"),
            ("PUT", "/v1/prefs/ok.key?scope=/a/../b", "1", 400, "invalid_scope"),
            ("PUT", "/v1/prefs/ok.key?scope=/a/", "1", 400, "invalid_scope"),
            ("PUT", "/v1/prefs/ok.key", "\"" + String(repeating: "x", count: 1100) + "\"", 413, "too_large"),
            ("PUT", "/v1/prefs/ok.key", "\"" + String(repeating: "x", count: 100_000) + "\"", 413, "too_large"),
            ("PUT", "/v1/prefs/ok.key", "null", 400, "invalid_value"),
            ("PUT", "/v1/prefs/ui.size", "11", 400, "invalid_value"),
            ("PUT", "/v1/prefs/ui.size", "\"3\"", 400, "invalid_value"),
            ("PUT", "/v1/prefs/locked.key?scope=/a/b", "2", 409, "locked"),
            ("DELETE", "/v1/prefs/locked.key?scope=/a/b", nil, 409, "locked"),
            ("DELETE", "/v1/prefs/ok.key?recursive=maybe", nil, 400, "invalid_request"),
            ("POST", "/v1/prefs:batch", "{}", 400, "invalid_request"),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "set", "key": "ok.key", "value": 1}, {"op": "set", "key": "ui.size", "value": 99}]}"#, 400, "invalid_value"),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "explode", "key": "ok.key"}]}"#, 400, "invalid_request"),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "set", "key": "ok.key"}]}"#, 400, "invalid_request"),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "set", "key": "ok.key", "value": null}]}"#, 400, "invalid_value"),
            ("PUT", "/v1/prefs/ok.key", "1234567890123456789012345678901234567890123", 400, "invalid_value"),
            ("PUT", "/v1/prefs/ok.key", #"{"a": 1, "a": 2}"#, 400, "invalid_json"),
            ("GET", "/v1/watch?since=999999", nil, 400, "invalid_request"),
            ("PUT", "/v1/schema/ok.key", #"{"type": "enum"}"#, 400, "invalid_schema"),
            ("PUT", "/v1/schema/ok.key", #"{"type": "int", "maxlen": 3}"#, 400, "invalid_schema"),
            ("PUT", "/v1/schema/ok.key", #"{"type": "int", "default": "x"}"#, 400, "invalid_schema"),
            ("PUT", "/v1/schema/locked.key", #"{"type": "string"}"#, 400, "invalid_schema"),
            ("POST", "/v1/load", #"{"format": 2}"#, 400, "invalid_request"),
            ("POST", "/v1/load", "[1, 2]", 400, "invalid_request"),
            ("GET", "/v1/watch?since=-4", nil, 400, "invalid_request"),
            ("GET", "/v1/watch?key=Bad", nil, 400, "invalid_key"),
            ("GET", "/v1/nothing", nil, 404, "not_found"),
            ("GET", "/v1/schema/absent.key", nil, 404, "not_found"),
        ]
        for (method, target, body, status, code) in cases {
            let answer = try await daemon.raw(method, target, body: body)
            #expect(answer.status == status, "\(method) \(target): \(answer.body)")
            #expect(answer.code == code, "\(method) \(target): \(answer.body)")
        }
        #expect(try await client.status().revision == revision)
        #expect(try await client.resolve("ok.key").source == .none)
        #expect(try await client.resolve("locked.key", scope: "/a/b").value == 1)
    }

    /// What `openapi.yaml` forbids the server refuses, with 400 `invalid_request`, changing
    /// nothing: unknown fields in a draft's poll and in a dump (its values and locks too), `null`
    /// for an optional field of a new draft, a dump or a batch operation (absent is not `null`),
    /// and a malformed `Last-Event-ID` even beside `since`, which wins over a good one.
    @Test func whatTheContractForbidsIsRefused() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice"))
        let poll = #""options": ["a", "b"], "expiresIn": 60, "multiple": false"#
        let cases: [(String, String, String?, [(String, String)])] = [
            ("POST", "/v1/drafts", #"{"account": "bob", "poll": {\#(poll), "anonymous": true}}"#, []),
            ("PATCH", "/v1/drafts/\(draft.id.uuidString)", #"{"poll": {\#(poll), "anonymous": true}}"#, []),
            ("POST", "/v1/load", #"{"format": 1, "comment": "x"}"#, []),
            ("POST", "/v1/load", #"{"format": 1, "values": [{"key": "a.b", "scope": "/", "value": 1, "locked": true}]}"#, []),
            ("POST", "/v1/load", #"{"format": 1, "locks": [{"key": "a.b", "scope": "/", "value": 1}]}"#, []),
            ("POST", "/v1/load", #"{"format": 1, "scope": null}"#, []),
            ("POST", "/v1/drafts", #"{"account": "bob", "text": null}"#, []),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "set", "key": "a.b", "value": 1, "scope": null}]}"#, []),
            ("POST", "/v1/prefs:batch", #"{"operations": [{"op": "reset", "key": "a.b", "recursive": null}]}"#, []),
            ("GET", "/v1/watch?since=0", nil, [("Last-Event-ID", "x")]),
            ("GET", "/v1/watch?since=0", nil, [("Last-Event-ID", "")]),
        ]
        for (method, target, body, headers) in cases {
            let answer = try await daemon.raw(method, target, body: body, headers: headers)
            #expect(answer.status == 400, "\(method) \(target) \(body ?? "") \(headers): \(answer.body)")
            #expect(answer.code == "invalid_request", "\(method) \(target) \(body ?? "") \(headers): \(answer.body)")
        }
        #expect(try await client.status().revision == 1, "only the draft's creation")
        #expect(try await client.draft(draft.id).revision == 1)
        // A dump without `locks` (or anything but `format`) is still a dump.
        let load = try await daemon.raw("POST", "/v1/load", body: #"{"format": 1, "values": [{"key": "a.b", "scope": "/", "value": 1}]}"#)
        #expect(load.status == 200, "\(load.body)")
    }

    @Test func aBatchIsAllOrNothing() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        await #expect(throws: PrefsError.self) {
            try await client.apply(PreferenceBatch(operations: [.set("a.one", 1), .set("a.two", .null)]))
        }
        #expect(try await client.resolve("a.one").source == .none)
        let result = try await client.apply(
            PreferenceBatch(operations: [.set("a.one", 1), .set("a.two", 2, scope: "/x"), .reset("a.one")]))
        #expect(result.revisions == [1, 2, 3])
        #expect(try await client.resolve("a.one").source == .none)
        #expect(try await client.resolve("a.two", scope: "/x/y").value == 2)
    }
}
