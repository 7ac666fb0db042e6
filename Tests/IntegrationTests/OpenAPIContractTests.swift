import Foundation
import PrefsClient
import PrefsKit
import Testing

/// The real daemon against `openapi.yaml`: every documented operation is sent a well-formed
/// request and, where it takes input, malformed ones derived from its documented parameters and
/// body; every answer must carry a status the document lists for that operation (never a 500),
/// every error body must be the documented `Error`, and every JSON answer must have the fields
/// its documented schema names. The reverse holds too: every implemented route of DESIGN.md's
/// table must be in the document.
@Suite struct OpenAPIContractTests {
    /// `openapi.yaml` at the package root: three levels up from this file
    /// (`Tests/IntegrationTests/OpenAPIContractTests.swift`).
    static let documentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // IntegrationTests/
        .deletingLastPathComponent()  // Tests/
        .deletingLastPathComponent()  // the package root
        .appending(path: "openapi.yaml")

    /// The rows of DESIGN.md's HTTP API table that the server implements today (the drafts,
    /// attachments and threads rows are not built yet). Each must be in the document.
    static let implementedRoutes: Set<String> = [
        "GET /v1/status",
        "GET /v1/prefs/{key}", "PUT /v1/prefs/{key}", "DELETE /v1/prefs/{key}",
        "GET /v1/prefs",
        "POST /v1/prefs:batch",
        "PUT /v1/locks/{key}", "DELETE /v1/locks/{key}",
        "GET /v1/schema", "PUT /v1/schema",
        "GET /v1/schema/{key}", "PUT /v1/schema/{key}",
        "GET /v1/dump", "POST /v1/load",
        "GET /v1/watch",
    ]

    /// The statuses the server can answer with (PrefsError.Code.httpStatus, less 401/403, which
    /// only a TCP listener with a token could give, and 500, which is a bug).
    static let possibleStatuses: Set<Int> = [200, 400, 404, 409, 410, 412, 413, 503, 507]

    static func document() throws -> OpenAPIDocument {
        let document = OpenAPIDocument(text: try String(contentsOf: documentURL, encoding: .utf8))
        #expect(document.problems.isEmpty, "openapi.yaml breaks the layout this test reads: \(document.problems)")
        return document
    }

    // MARK: - The document on its own

    @Test func theDocumentListsEveryImplementedRouteWithItsErrors() throws {
        let document = try Self.document()
        let documented = Set(document.operations.map(\.name))
        #expect(document.operations.count == documented.count, "an operation is documented twice")
        for route in Self.implementedRoutes.sorted() {
            #expect(documented.contains(route), "openapi.yaml does not document \(route)")
        }
        for operation in document.operations {
            let name = operation.name
            #expect(operation.statuses.filter { (200..<300).contains($0) }.count == 1, "\(name): one success status")
            #expect(operation.statuses.isSubset(of: Self.possibleStatuses), "\(name): \(operation.statuses.sorted())")
            let parameters = operation.parameterRefs.compactMap { document.parameters[$0] }
            #expect(parameters.count == operation.parameterRefs.count, "\(name): unknown parameter in \(operation.parameterRefs)")
            let takesCheckedInput = operation.hasBody || parameters.contains { $0.name != "prefix" }
            if takesCheckedInput { #expect(operation.statuses.contains(400), "\(name) takes input but documents no 400") }
            if operation.hasBody { #expect(operation.statuses.contains(413), "\(name) takes a body but documents no 413") }
            if operation.method != "GET" {
                #expect(operation.statuses.contains(503), "\(name) writes but documents no 503 (shutting down)")
            }
            if let success = operation.statuses.first(where: { (200..<300).contains($0) }), operation.path != "/v1/watch" {
                #expect(operation.jsonSchemas[success] != nil, "\(name): its \(success) answer names no JSON schema")
            }
        }
        for name in [
            "ResolvedPreference", "ChainLayer", "WriteResult", "PreferenceList", "SchemaList", "PreferenceSchema",
            "PreferenceBatch", "PreferenceOperation", "PrefsDump", "ChangeEvent", "ServiceStatus", "Error",
        ] {
            #expect(document.schemas[name] != nil, "openapi.yaml has no components/schemas/\(name)")
        }
    }

    /// The Swift wire types, fully populated and encoded as the server encodes them, have exactly
    /// the fields the document names — including the ones live answers rarely carry.
    @Test func theWireTypesEncodeToTheDocumentedShapes() throws {
        let document = try Self.document()
        let encoder = JSONEncoder()
        func check(_ value: some Encodable, as schema: String) throws {
            let json = try JSONSerialization.jsonObject(with: try encoder.encode(value), options: .fragmentsAllowed)
            let problems = document.problems(in: json, as: schema, at: schema)
            #expect(problems.isEmpty, "\(problems)")
        }
        let schema = PreferenceSchema(
            type: .int, defaultValue: 5, minimum: 1, maximum: 10, maxLength: nil, choices: nil, description: "Size.")
        try check(schema, as: "PreferenceSchema")
        try check(
            PreferenceSchema(type: .enum, defaultValue: "a", maxLength: 3, choices: ["a", "b"], description: "x"),
            as: "PreferenceSchema")
        try check(
            ResolvedPreference(
                key: "ui.size", scope: "/a/b", value: 3, source: .lock("/a"), revision: 7,
                chain: [
                    ChainLayer(layer: .override, value: 1, revision: nil),
                    ChainLayer(layer: .lock("/a"), value: 3, revision: 6),
                    ChainLayer(layer: .scope("/a/b"), value: nil, revision: nil),
                    ChainLayer(layer: .default, value: 5, revision: nil),
                ]),
            as: "ResolvedPreference")
        try check(WriteResult(revision: 3, revisions: [1, 2, 3], removed: 2), as: "WriteResult")
        try check(
            PreferenceBatch(operations: [.set("a.b", 1, scope: "/x"), .reset("a.b", recursive: true)]),
            as: "PreferenceBatch")
        try check(
            PrefsDump(
                scope: "/", schemas: ["ui.size": schema], values: [.init(key: "ui.size", scope: "/a", value: 3)],
                locks: [.init(key: "ui.size", scope: "/a")]),
            as: "PrefsDump")
        try check(
            ChangeEvent(
                revision: 9, kind: .set, key: "ui.size", scope: "/a", value: 3, source: .scope("/a"), draft: "d",
                attachment: "x"),
            as: "ChangeEvent")
        try check(
            ServiceStatus(
                version: prefsVersion, database: "/tmp/p.sqlite", revision: 9, oldestRevision: 1, uptimeSeconds: 1.5,
                pid: 42, counts: .init(keys: 1, values: 2, locks: 3, schemas: 4, overrides: 5, watchers: 6)),
            as: "ServiceStatus")
        try check(ErrorBody(PrefsError(.compacted, "Gone.", oldestRevision: 21)), as: "Error")
        // Every error code the server can send is one the document lists.
        let codes = Set(document.enumValues(of: "ErrorDetail", property: "code"))
        for code in PrefsError.Code.allCases {
            #expect(codes.contains(code.rawValue), "ErrorDetail.code does not list \(code.rawValue)")
        }
    }

    // MARK: - The daemon against the document

    @Test func everyOperationAnswersOnlyWhatTheDocumentLists() async throws {
        let document = try Self.document()
        // A short change log, so an old `since` is compacted (410); a small value limit, so 413
        // is cheap to reach.
        let daemon = try await Daemon(arguments: ["--retain-changes", "4", "--max-value-bytes", "1024"])
        let client = daemon.client
        try await client.register(schemas: ["ui.size": PreferenceSchema(type: .int, defaultValue: 5, minimum: 1, maximum: 10)])
        try await client.set("ui.size", to: 3, scope: "/accounts/alice")
        try await client.set("locked.key", to: 1, scope: "/a")
        try await client.lock("locked.key", scope: "/a")
        try await client.lock("unlock.me", scope: "/")
        for index in 0..<8 { try await client.set("filler.key", to: .integer(Int64(index))) }
        #expect(try await client.status().oldestRevision > 2, "the change log should have been compacted")

        let probes = Self.probes
        var byOperation: [String: [Probe]] = [:]
        for probe in probes { byOperation[probe.operation, default: []].append(probe) }

        // Every documented operation has a well-formed probe, and every probe is of a documented
        // operation.
        let documented = Dictionary(document.operations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in documented.keys.sorted() {
            #expect(byOperation[name]?.contains { (200..<300).contains($0.expected) } == true, "no well-formed probe for \(name)")
        }
        for name in byOperation.keys.sorted() {
            #expect(documented[name] != nil, "\(name) is probed but not in openapi.yaml")
        }

        // Malformed requests, derived from what the document says each operation takes.
        var all = probes
        for operation in document.operations {
            guard let base = byOperation[operation.name]?.first(where: { (200..<300).contains($0.expected) }) else { continue }
            all += Self.malformed(from: base, operation: operation, document: document)
        }

        var checked = Set<String>()
        for probe in all {
            guard let operation = documented[probe.operation] else { continue }
            let revision = try await client.status().revision
            let answer = try await Self.send(probe, socket: daemon.socketPath, revision: revision)
            let label = "\(probe.method) \(probe.target(revision: revision)) (\(probe.note))"
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status != 500, "\(label) answered 500: \(text)")
            #expect(operation.statuses.contains(answer.status), "\(label) answered \(answer.status), undocumented: \(text)")
            #expect(answer.status == probe.expected, "\(label) answered \(answer.status), not \(probe.expected): \(text)")
            checked.insert(probe.operation)
            if (200..<300).contains(answer.status) {
                if let schema = operation.jsonSchemas[answer.status] {
                    let json = try? JSONSerialization.jsonObject(with: answer.body, options: .fragmentsAllowed)
                    #expect(json != nil, "\(label): the answer is not JSON: \(text)")
                    if let json {
                        let problems = document.problems(in: json, as: schema, at: schema)
                        #expect(problems.isEmpty, "\(label): \(problems)")
                    }
                }
                probe.checkAnswer?(answer.body)
            } else {
                let error = try? JSONDecoder().decode(ErrorBody.self, from: answer.body)
                #expect(error != nil, "\(label): the error body is not an ErrorBody: \(text)")
                #expect(error?.error.code.isEmpty == false, "\(label): the error has no code")
                if let code = probe.expectedCode { #expect(error?.error.code == code, "\(label): \(text)") }
                if answer.status == 410 { #expect(error?.error.oldestRevision != nil, "\(label): no oldestRevision") }
                if let json = try? JSONSerialization.jsonObject(with: answer.body) {
                    let problems = document.problems(in: json, as: "Error", at: "Error")
                    #expect(problems.isEmpty, "\(label): \(problems)")
                }
            }
        }
        #expect(checked == Set(documented.keys), "operations left unchecked: \(Set(documented.keys).subtracting(checked))")
    }

    /// The success case of `GET /v1/watch`, read with a bound: a replayed event's `id:`,
    /// `event:` and `data:` agree with each other and with the `ChangeEvent` schema, and the
    /// client decodes the same stream.
    @Test func theWatchStreamCarriesDocumentedEvents() async throws {
        let document = try Self.document()
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.set("w.key", to: 1, scope: "/accounts")
        let since = try await client.status().revision - 1
        let socket = daemon.socketPath

        for target in ["/v1/watch?key=w.key&since=\(since)", "/v1/watch?prefix=w.&scope=/accounts/alice&since=\(since)"] {
            let (status, fields) = try await Self.firstEvent(socket: socket, target: target)
            #expect(status == 200, "\(target)")
            let data = try #require(fields["data"], "\(target): no data in \(fields)")
            let json = try JSONSerialization.jsonObject(with: Data(data.utf8))
            let problems = document.problems(in: json, as: "ChangeEvent", at: "ChangeEvent")
            #expect(problems.isEmpty, "\(target): \(problems)")
            let event = try JSONDecoder().decode(ChangeEvent.self, from: Data(data.utf8))
            #expect(fields["id"] == String(event.revision), "\(target): \(fields)")
            #expect(fields["event"] == event.kind.rawValue, "\(target): \(fields)")
            #expect(event.revision == since + 1)
            #expect(event.value == 1)
            if target.contains("scope=") {
                #expect(event.source == .scope("/accounts"))
                #expect(event.scope == "/accounts/alice")
            }
        }

        // The client reads the same stream; bounded, so a silent stream fails instead of hanging.
        let event = try await withContractTimeout(seconds: 10, "client.watch") {
            for try await event in client.watch(WatchRequest(keys: ["w.key"], since: since)) where !event.kind.isNotice {
                return event
            }
            throw PrefsError(.unavailable, "the watch ended before an event")
        }
        #expect(event.kind == .set)
        #expect(event.key == "w.key")
        #expect(event.revision == since + 1)
    }
}

// MARK: - Probes

extension OpenAPIContractTests {
    /// One request to send, and the status it must get.
    struct Probe: Sendable {
        var method: String
        /// The documented path, e.g. `/v1/prefs/{key}`.
        var path: String
        /// The `{key}` to put in the path.
        var key: String?
        /// Query items; the value `$revision` stands for the store's revision when sent.
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body: String?
        var expected: Int
        var expectedCode: String?
        var note: String
        /// More checks of a 2xx answer's body.
        var checkAnswer: (@Sendable (Data) -> Void)?

        init(
            _ method: String, _ path: String, key: String? = nil, query: [(String, String)] = [],
            headers: [(String, String)] = [], body: String? = nil, expect expected: Int, code: String? = nil,
            _ note: String, check: (@Sendable (Data) -> Void)? = nil
        ) {
            self.method = method
            self.path = path
            self.key = key
            self.query = query
            self.headers = headers
            self.body = body
            self.expected = expected
            self.expectedCode = code
            self.note = note
            self.checkAnswer = check
        }

        var operation: String { "\(method) \(path)" }

        func target(revision: Revision) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~/:@")
            let path = key.map { self.path.replacingOccurrences(of: "{key}", with: $0) } ?? self.path
            let items = query.map { name, value in
                let value = value == "$revision" ? String(revision) : value
                return "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
            }
            return items.isEmpty ? path : path + "?" + items.joined(separator: "&")
        }

        func resolvedHeaders(revision: Revision) -> [(String, String)] {
            headers.map { ($0.0, $0.1 == "$revision" ? String(revision) : $0.1) }
        }

        /// This probe with query item `name` set to `value` (added if absent).
        func setting(_ name: String, to value: String) -> Probe {
            var copy = self
            if let index = copy.query.firstIndex(where: { $0.0 == name }) {
                copy.query[index].1 = value
            } else {
                copy.query.append((name, value))
            }
            return copy
        }

        func malformed(_ note: String, code: String) -> Probe {
            var copy = self
            copy.expected = 400
            copy.expectedCode = code
            copy.note = note
            copy.checkAnswer = nil
            return copy
        }
    }

    /// Well-formed requests for every operation (the first 2xx one of each is also the base its
    /// malformed variants are made from), and requests that reach the documented non-400 errors.
    /// They run in order against the state `everyOperationAnswersOnlyWhatTheDocumentLists` sets up.
    static var probes: [Probe] {
        let big = "\"" + String(repeating: "x", count: 2000) + "\""
        return [
            Probe("GET", "/v1/status", expect: 200, "status"),

            Probe(
                "GET", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/alice/threads/42"), ("explain", "1")],
                expect: 200, "explained resolve",
                check: { body in
                    let resolved = try? JSONDecoder().decode(ResolvedPreference.self, from: body)
                    #expect(resolved?.source == .scope("/accounts/alice"))
                    #expect(resolved?.chain?.count == 6, "five scopes from /accounts/alice/threads/42 up to /, then the default")
                }),
            Probe("GET", "/v1/prefs/{key}", key: "unset.key", expect: 200, "an unset key is 200 with source none"),
            Probe("GET", "/v1/prefs/{key}", key: "locked.key", query: [("scope", "/a/b"), ("explain", "")], expect: 200, "locked"),

            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/bob")], body: "7", expect: 200, "set"),
            Probe("PUT", "/v1/prefs/{key}", key: "locked.key", query: [("scope", "/a/b")], body: "2", expect: 409, code: "locked", "below a lock"),
            Probe("PUT", "/v1/prefs/{key}", key: "big.value", body: big, expect: 413, code: "too_large", "over --max-value-bytes"),
            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", body: "11", expect: 400, code: "invalid_value", "breaks the schema"),
            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", body: "null", expect: 400, code: "invalid_value", "null"),

            Probe(
                "DELETE", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts"), ("recursive", "1")],
                expect: 200, "recursive reset",
                check: { body in
                    #expect((try? JSONDecoder().decode(WriteResult.self, from: body))?.removed == 2, "alice's and bob's")
                }),
            Probe("DELETE", "/v1/prefs/{key}", key: "locked.key", query: [("scope", "/a/b")], expect: 409, code: "locked", "below a lock"),

            Probe("GET", "/v1/prefs", query: [("scope", "/a/b"), ("prefix", "locked.")], expect: 200, "list"),

            Probe(
                "POST", "/v1/prefs:batch",
                body: #"{"operations": [{"op": "set", "key": "batch.one", "value": 1}, {"op": "reset", "key": "batch.one", "scope": "/", "recursive": true}]}"#,
                expect: 200, "set and reset",
                check: { body in
                    #expect((try? JSONDecoder().decode(WriteResult.self, from: body))?.revisions?.count == 2)
                }),
            Probe(
                "POST", "/v1/prefs:batch", body: #"{"operations": [{"op": "set", "key": "locked.key", "scope": "/a/b", "value": 2}]}"#,
                expect: 409, code: "locked", "below a lock"),
            Probe(
                "POST", "/v1/prefs:batch", body: #"{"operations": [{"op": "set", "key": "big.value", "value": \#(big)}]}"#,
                expect: 413, code: "too_large", "a value over --max-value-bytes"),
            Probe("POST", "/v1/prefs:batch", body: "[1, 2]", expect: 400, code: "invalid_request", "not a batch"),

            Probe("PUT", "/v1/locks/{key}", key: "lock.me", query: [("scope", "/team")], expect: 200, "lock"),
            Probe("DELETE", "/v1/locks/{key}", key: "unlock.me", query: [("scope", "/")], expect: 200, "unlock"),
            Probe("DELETE", "/v1/locks/{key}", key: "never.locked", expect: 404, code: "not_found", "no lock there"),

            Probe("GET", "/v1/schema", expect: 200, "every schema"),
            Probe(
                "PUT", "/v1/schema",
                body: #"{"theme.name": {"type": "enum", "choices": ["light", "dark"], "default": "light", "description": "The theme."}}"#,
                expect: 200, "register"),
            Probe("PUT", "/v1/schema", body: #"{"x.y": {"type": "enum"}}"#, expect: 400, code: "invalid_schema", "enum without choices"),

            Probe("GET", "/v1/schema/{key}", key: "ui.size", expect: 200, "one schema"),
            Probe("GET", "/v1/schema/{key}", key: "absent.key", expect: 404, code: "not_found", "no schema"),
            Probe(
                "PUT", "/v1/schema/{key}", key: "font.size", body: #"{"type": "double", "min": 6, "max": 72, "default": 12}"#,
                expect: 200, "register"),
            Probe("PUT", "/v1/schema/{key}", key: "font.size", body: #"{"type": "int", "maxlen": 3}"#, expect: 400, code: "invalid_schema", "unknown field"),

            Probe("GET", "/v1/dump", query: [("scope", "/")], expect: 200, "everything"),
            Probe("GET", "/v1/dump", query: [("scope", "/a")], expect: 200, "a subtree"),

            Probe(
                "POST", "/v1/load",
                body: #"{"format": 1, "scope": "/x", "schemas": {}, "values": [{"key": "loaded.key", "scope": "/x/y", "value": true}], "locks": [{"key": "loaded.key", "scope": "/x"}]}"#,
                expect: 200, "load"),
            Probe(
                "POST", "/v1/load", body: #"{"format": 1, "values": [{"key": "locked.key", "scope": "/a/b", "value": 3}]}"#,
                expect: 409, code: "locked", "a value below a lock"),
            Probe("POST", "/v1/load", body: #"{"format": 2}"#, expect: 400, code: "invalid_request", "unknown format"),

            // The watch answers its head at once; `send` reads only the first bytes of a 200.
            Probe("GET", "/v1/watch", query: [("key", "filler.key"), ("since", "$revision")], expect: 200, "resume from now"),
            Probe("GET", "/v1/watch", expect: 200, "everything, live"),
            Probe("GET", "/v1/watch", headers: [("Last-Event-ID", "$revision")], expect: 200, "resume by Last-Event-ID"),
            Probe("GET", "/v1/watch", query: [("since", "0")], expect: 410, code: "compacted", "since before the change log"),
        ]
    }

    /// The malformed variants of `base`, one per documented input of `operation`.
    static func malformed(from base: Probe, operation: OpenAPIDocument.Operation, document: OpenAPIDocument) -> [Probe] {
        var probes: [Probe] = []
        for reference in operation.parameterRefs {
            guard let parameter = document.parameters[reference] else { continue }
            switch (parameter.location, parameter.name) {
            case ("path", "key"):
                var probe = base.malformed("invalid key in the path", code: "invalid_key")
                probe.key = "Bad"
                probes.append(probe)
            case ("query", "scope"):
                probes.append(base.setting("scope", to: "nope").malformed("invalid scope", code: "invalid_scope"))
            case ("query", "explain"), ("query", "recursive"):
                probes.append(base.setting(parameter.name, to: "maybe").malformed("bad flag", code: "invalid_request"))
            case ("query", "since"):
                probes.append(base.setting("since", to: "-4").malformed("negative since", code: "invalid_request"))
            case ("query", "key"):
                probes.append(base.setting("key", to: "Bad").malformed("invalid key to watch", code: "invalid_key"))
            case ("query", "prefix"):
                continue  // Free text: any string is a prefix.
            case ("header", "Last-Event-ID"):
                var probe = base.malformed("Last-Event-ID that is not a revision", code: "invalid_request")
                probe.query.removeAll { $0.0 == "since" }
                probe.headers = [("Last-Event-ID", "x")]
                probes.append(probe)
            default:
                Issue.record("\(operation.name): no malformed value known for \(parameter.location) parameter '\(parameter.name)'; add one here")
            }
        }
        if operation.hasBody {
            var probe = base.malformed("body that is not JSON", code: "invalid_json")
            probe.body = "{bad json"
            probes.append(probe)
        }
        return probes
    }

    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// Sends one probe on its own connection. A watch answered 200 is an open stream: only its
    /// first bytes are read, then the connection is dropped.
    static func send(_ probe: Probe, socket: String, revision: Revision) async throws -> Answer {
        let spec = HTTPRequestSpec(
            method: probe.method, target: probe.target(revision: revision), body: probe.body.map { Data($0.utf8) },
            headers: probe.resolvedHeaders(revision: revision))
        let isWatch = probe.path == "/v1/watch"
        return try await withContractTimeout(seconds: 20, "\(probe.method) \(spec.target)") {
            let transport = UnixSocketTransport(socketPath: socket)
            guard isWatch else {
                let response = try await transport.send(spec)
                return Answer(status: response.status, body: response.body)
            }
            let response = try await transport.stream(spec)
            var body = Data()
            for try await chunk in response.body {
                body.append(chunk)
                if response.status == 200 { break }
            }
            return Answer(status: response.status, body: body)
        }
    }

    /// The status of a watch and the fields (`id`, `event`, `data`) of its first event that is
    /// not a `progress` notice, read within 10 seconds.
    static func firstEvent(socket: String, target: String) async throws -> (status: Int, fields: [String: String]) {
        try await withContractTimeout(seconds: 10, target) {
            let response = try await UnixSocketTransport(socketPath: socket).stream(HTTPRequestSpec(method: "GET", target: target))
            guard response.status == 200 else { return (response.status, [:]) }
            var pending = Data()
            let separator = Data("\n\n".utf8)
            for try await chunk in response.body {
                pending.append(chunk)
                while let range = pending.range(of: separator) {
                    let block = String(decoding: pending[pending.startIndex..<range.lowerBound], as: UTF8.self)
                    pending = Data(pending[range.upperBound...])
                    var fields: [String: String] = [:]
                    for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                        guard let colon = line.firstIndex(of: ":") else { continue }
                        var value = line[line.index(after: colon)...]
                        if value.hasPrefix(" ") { value = value.dropFirst() }
                        fields[String(line[..<colon])] = String(value)
                    }
                    if let kind = fields["event"], kind != "progress" { return (200, fields) }
                }
            }
            throw PrefsError(.unavailable, "\(target) ended before an event")
        }
    }
}

/// Runs `work`, failing with a clear error if it takes longer than `seconds`.
private func withContractTimeout<T: Sendable>(
    seconds: Int, _ what: String, _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw PrefsError(.unavailable, "\(what) took longer than \(seconds) s")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

// MARK: - Reading openapi.yaml

/// What the contract test reads of `openapi.yaml`: operations (method, path, parameter refs,
/// whether they take a body, status codes, the schema of each JSON answer), component
/// parameters, and component schemas (type object or not, closed or not, required fields,
/// properties and the schemas they refer to).
///
/// This is a small hand-written line reader, not a YAML parser — the package takes no YAML
/// dependency for one test. It works because the document is written in a regular, predictable
/// layout (described at its top): two-space indentation, one key per line, quoted status codes
/// directly under `responses:`, operation parameters only as `- $ref`, flow-style `required:`
/// lists, and a property's `$ref` either directly under it or on the line after `items:` or
/// `additionalProperties:`. Block scalars (`key: |`) are skipped whole. A line in `paths` that
/// does not fit that layout is reported in ``problems`` rather than skipped, so a change of
/// layout fails the test instead of silently hiding an operation.
struct OpenAPIDocument {
    struct Operation {
        var method: String
        var path: String
        var statuses: Set<Int> = []
        var parameterRefs: [String] = []
        var hasBody = false
        /// Status → the component schema of its `application/json` answer.
        var jsonSchemas: [Int: String] = [:]

        var name: String { "\(method) \(path)" }
    }

    struct Parameter {
        var name = ""
        var location = ""
    }

    struct Schema {
        enum Nesting { case direct, array, map }

        var isObject = false
        /// `additionalProperties: false`: no field beyond `properties`.
        var closed = false
        var required: [String] = []
        var properties: Set<String> = []
        /// Property → the component schema its value (or each element, or each map value) has.
        var references: [String: (nesting: Nesting, schema: String)] = [:]
        /// Property → its `enum:` list, when written as a block list.
        var enums: [String: [String]] = [:]
    }

    private(set) var operations: [Operation] = []
    private(set) var parameters: [String: Parameter] = [:]
    private(set) var schemas: [String: Schema] = [:]
    private(set) var problems: [String] = []

    private static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]

    init(text: String) {
        enum Zone { case none, parameters, responses, other }
        var section = ""
        var subsection = ""
        var path: String?
        var zone = Zone.none
        var status: Int?
        var inJSON = false
        var component: String?
        var inProperties = false
        var property: String?
        var inEnum = false
        var blockScalarIndent: Int?
        var previous = ""

        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in lines.enumerated() {
            let line = String(rawLine)
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            let indent = line.prefix { $0 == " " }.count
            if let block = blockScalarIndent {
                if indent > block { continue }
                blockScalarIndent = nil
            }
            if text.hasPrefix("#") { continue }
            defer { previous = text }
            let (key, value) = Self.split(text)
            if ["|", ">", "|-", ">-"].contains(value) { blockScalarIndent = indent }
            let lineNumber = index + 1

            if indent == 0 {
                section = key
                subsection = ""
                continue
            }
            switch section {
            case "paths":
                if indent == 2 {
                    guard key.hasPrefix("/"), value.isEmpty else {
                        problems.append("line \(lineNumber): expected a path")
                        continue
                    }
                    path = key
                } else if indent == 4 {
                    guard let path, Self.methods.contains(key), value.isEmpty else {
                        problems.append("line \(lineNumber): expected a method under a path")
                        continue
                    }
                    operations.append(Operation(method: key.uppercased(), path: path))
                    zone = .none
                } else if operations.isEmpty {
                    problems.append("line \(lineNumber): outside an operation")
                } else if indent == 6 {
                    switch key {
                    case "parameters": zone = .parameters
                    case "responses": zone = .responses
                    case "requestBody":
                        zone = .other
                        operations[operations.count - 1].hasBody = true
                    default: zone = .other
                    }
                    status = nil
                } else if zone == .parameters, indent == 8 {
                    let prefix = "#/components/parameters/"
                    guard text.hasPrefix("- $ref:"), value.hasPrefix(prefix) else {
                        problems.append("line \(lineNumber): parameters must be `- $ref: \"\(prefix)NAME\"`")
                        continue
                    }
                    operations[operations.count - 1].parameterRefs.append(String(value.dropFirst(prefix.count)))
                } else if zone == .responses, indent == 8 {
                    guard value.isEmpty, key.hasPrefix("\""), let code = Int(key.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) else {
                        problems.append("line \(lineNumber): expected a quoted status code under responses")
                        continue
                    }
                    operations[operations.count - 1].statuses.insert(code)
                    status = code
                    inJSON = false
                } else if zone == .responses, indent > 8, let status {
                    if value.isEmpty, key.contains("/") {
                        inJSON = key == "application/json"
                    } else if inJSON, key == "$ref", let name = Self.schemaName(value) {
                        operations[operations.count - 1].jsonSchemas[status] = name
                    }
                }
            case "components":
                if indent == 2 {
                    subsection = key
                    component = nil
                    continue
                }
                if indent == 4 {
                    component = key
                    inProperties = false
                    property = nil
                    if subsection == "schemas" { schemas[key] = Schema() }
                    if subsection == "parameters" { parameters[key] = Parameter() }
                    continue
                }
                guard let component else { continue }
                if subsection == "parameters", indent == 6 {
                    if key == "name" { parameters[component]?.name = value }
                    if key == "in" { parameters[component]?.location = value }
                } else if subsection == "schemas" {
                    if indent == 6 {
                        inProperties = key == "properties"
                        property = nil
                        if key == "type", value == "object" { schemas[component]?.isObject = true }
                        if key == "additionalProperties", value == "false" { schemas[component]?.closed = true }
                        if key == "required" {
                            guard value.hasPrefix("["), value.hasSuffix("]") else {
                                problems.append("line \(lineNumber): write `required:` as [a, b]")
                                continue
                            }
                            schemas[component]?.required = value.dropFirst().dropLast().split(separator: ",")
                                .map { $0.trimmingCharacters(in: .whitespaces) }
                        }
                    } else if inProperties, indent == 8 {
                        property = key
                        inEnum = false
                        schemas[component]?.properties.insert(key)
                    } else if inProperties, let property, indent == 10 {
                        inEnum = key == "enum" && value.isEmpty
                        if key == "$ref", let name = Self.schemaName(value) {
                            schemas[component]?.references[property] = (.direct, name)
                        }
                    } else if inProperties, let property, indent > 10 {
                        if inEnum, text.hasPrefix("- ") {
                            schemas[component]?.enums[property, default: []].append(String(text.dropFirst(2)))
                        } else if key == "$ref", let name = Self.schemaName(value) {
                            let nesting: Schema.Nesting =
                                switch previous {
                                case "items:": .array
                                case "additionalProperties:": .map
                                default: .direct
                                }
                            schemas[component]?.references[property] = (nesting, name)
                        }
                    }
                }
            default:
                continue
            }
        }
    }

    /// `key: value` → (key, value without quotes); `key:` → (key, "").
    private static func split(_ text: String) -> (String, String) {
        var text = Substring(text)
        if text.hasPrefix("- ") { text = text.dropFirst(2) }
        if let range = text.range(of: ": ") {
            let value = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
            let unquoted = value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") ? String(value.dropFirst().dropLast()) : value
            return (String(text[..<range.lowerBound]), unquoted)
        }
        return (text.hasSuffix(":") ? String(text.dropLast()) : String(text), "")
    }

    private static func schemaName(_ reference: String) -> String? {
        let prefix = "#/components/schemas/"
        return reference.hasPrefix(prefix) ? String(reference.dropFirst(prefix.count)) : nil
    }

    /// The block-list `enum:` of a schema's property.
    func enumValues(of schema: String, property: String) -> [String] {
        schemas[schema]?.enums[property] ?? []
    }

    /// Where `value` (parsed JSON) does not have the shape of component schema `name`: missing
    /// required fields, fields the schema does not name (when closed), and the same for every
    /// nested value whose property refers to another object schema.
    func problems(in value: Any, as name: String, at location: String) -> [String] {
        guard let schema = schemas[name] else { return ["\(location): openapi.yaml has no schema \(name)"] }
        guard schema.isObject else { return [] }
        guard let object = value as? [String: Any] else { return ["\(location): not an object, but \(name) is one"] }
        var found: [String] = []
        for field in schema.required where object[field] == nil {
            found.append("\(location): lacks '\(field)', which \(name) requires")
        }
        if schema.closed {
            for field in object.keys.sorted() where !schema.properties.contains(field) {
                found.append("\(location).\(field): not a property of \(name)")
            }
        }
        for (field, reference) in schema.references.sorted(by: { $0.key < $1.key }) {
            guard let member = object[field], !(member is NSNull) else { continue }
            let place = "\(location).\(field)"
            switch reference.nesting {
            case .direct:
                found += problems(in: member, as: reference.schema, at: place)
            case .array:
                guard let elements = member as? [Any] else {
                    found.append("\(place): not an array")
                    continue
                }
                for (index, element) in elements.enumerated() {
                    found += problems(in: element, as: reference.schema, at: "\(place)[\(index)]")
                }
            case .map:
                guard let map = member as? [String: Any] else {
                    found.append("\(place): not an object")
                    continue
                }
                for (mapKey, element) in map.sorted(by: { $0.key < $1.key }) {
                    found += problems(in: element, as: reference.schema, at: "\(place)[\(mapKey)]")
                }
            }
        }
        return found
    }
}
