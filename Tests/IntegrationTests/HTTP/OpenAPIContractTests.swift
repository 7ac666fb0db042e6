import Foundation
import PrefsClient
import PrefsKit
import Testing

/// The real daemon against `openapi.yaml`: every documented operation is sent a well-formed
/// request and, where it takes input, malformed ones derived from its documented parameters and
/// body; every answer must carry a status the document lists for that operation (never a 500),
/// every error body must be the documented `Error`, and every JSON answer must have the fields
/// its documented schema names and decode as the Swift type it stands for. The reverse holds
/// too: every route the server implements (``implementedRoutes``) must be in the document, and the
/// document names no other.
@Suite struct OpenAPIContractTests {
    /// `openapi.yaml` at the package root.
    static let documentURL = Checkout.url("openapi.yaml")

    /// Every endpoint of the HTTP API, as the server declares it (PrefsServer's Endpoints/); path
    /// parameters are named as the endpoints name them (a draft's id is
    /// `{draft}`, an attachment's `{attachment}`). The document must hold exactly these
    /// operations: adding a route means adding it here and documenting it.
    static let implementedRoutes: Set<String> = [
        "GET /v1/status", "GET /v1/metrics",
        "GET /v1/prefs/{key}", "PUT /v1/prefs/{key}", "DELETE /v1/prefs/{key}",
        "GET /v1/prefs",
        "POST /v1/prefs:batch",
        "PUT /v1/locks/{key}", "DELETE /v1/locks/{key}",
        "GET /v1/schema", "PUT /v1/schema",
        "GET /v1/schema/{key}", "PUT /v1/schema/{key}",
        "GET /v1/dump", "POST /v1/load",
        "GET /v1/drafts", "POST /v1/drafts",
        "GET /v1/drafts/{draft}", "PATCH /v1/drafts/{draft}", "DELETE /v1/drafts/{draft}",
        "GET /v1/drafts/{draft}/validation",
        "POST /v1/drafts/{draft}/attachments",
        "GET /v1/drafts/{draft}/attachments/{attachment}/data",
        "PATCH /v1/drafts/{draft}/attachments/{attachment}", "DELETE /v1/drafts/{draft}/attachments/{attachment}",
        "HEAD /v1/blobs/{sha256}", "GET /v1/blobs/{sha256}", "PATCH /v1/blobs/{sha256}",
        "GET /v1/threads/{thread}",
        "GET /v1/watch",
        "GET /v1/prefs/{key}/history", "GET /v1/changes", "GET /v1/diff", "POST /v1/prefs:revert",
        "GET /v1/tokens", "POST /v1/tokens", "DELETE /v1/tokens/{name}",
        "POST /v1/sync", "POST /v1/sync:stream", "GET /v1/sync", "POST /v1/sync:now", "GET /v1/conflicts", "POST /v1/conflicts/{revision}/restore",
        "POST /ofrep/v1/evaluate/flags/{key}", "POST /ofrep/v1/evaluate/flags", "GET /ofrep/v1/configuration",
        "GET /ui", "GET /ui/{file}", "POST /ui/session", "GET /ui/session", "DELETE /ui/session", "POST /v1/ui/links",
    ]

    /// Whether an operation changes the store — and so can find its disk full (507): not OFREP's
    /// evaluations, nor the console's sign-in and links, which live in the daemon's memory.
    static func writesTheStore(_ operation: OpenAPIDocument.Operation) -> Bool {
        !isRead(operation) && !operation.path.hasPrefix("/ofrep/") && !operation.path.hasPrefix("/ui")
            && operation.path != "/v1/ui/links"
    }

    /// Whether an operation is a read: `GET`, or `HEAD`, which answers as `GET` without a body.
    static func isRead(_ operation: OpenAPIDocument.Operation) -> Bool {
        operation.method == "GET" || operation.method == "HEAD"
    }

    /// The statuses the server can answer with: 200, 201 for creations, and
    /// PrefsError.Code.httpStatus less 500, which is a bug; 304 for `If-None-Match`, 204 for a console's sign-out. (401 and 403 only the TCP listener
    /// gives, to a request without an accepted token or beyond its token's role or scope: this
    /// test talks to the socket, whose owner may do everything; TokenAccessTests sends them.)
    static let possibleStatuses: Set<Int> = [200, 201, 204, 304, 400, 401, 403, 404, 409, 410, 412, 413, 422, 429, 503, 507]

    /// The daemon's file token: the console's sign-in takes it.
    static let contractToken = "contract-t0ken"

    /// A draft id no draft has.
    static let unknownID = "00000000-0000-0000-0000-000000000000"

    /// The SHA-256 of "hello", and one of bytes no probe sends.
    static let helloSHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    static let unknownSHA256 = String(repeating: "0", count: 64)

    static func document() throws -> OpenAPIDocument {
        let document = OpenAPIDocument(text: try String(contentsOf: documentURL, encoding: .utf8))
        #expect(document.problems.isEmpty, "openapi.yaml breaks the layout this test reads: \(document.problems)")
        return document
    }

    /// The wire's JSON, as the server writes it: dates are ISO 8601 strings. This decoder takes
    /// them with or without fractions of a second, and nothing else, so decoding an answer also
    /// checks its dates.
    static func wireDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            let parsed =
                (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text))
            guard let parsed else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not ISO 8601"))
            }
            return parsed
        }
        return decoder
    }

    static func wireEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    // MARK: - The document on its own

    @Test func theDocumentListsEveryImplementedRouteWithItsErrors() throws {
        let document = try Self.document()
        let documented = Set(document.operations.map(\.name))
        #expect(document.operations.count == documented.count, "an operation is documented twice")
        for route in Self.implementedRoutes.sorted() {
            #expect(documented.contains(route), "openapi.yaml does not document \(route)")
        }
        for route in documented.subtracting(Self.implementedRoutes).sorted() {
            Issue.record("openapi.yaml documents \(route), which is not in implementedRoutes")
        }
        for operation in document.operations {
            let name = operation.name
            let successes = operation.statuses.filter { (200..<300).contains($0) }
            #expect(successes.count == 1, "\(name): one success status")
            #expect(operation.statuses.isSubset(of: Self.possibleStatuses), "\(name): \(operation.statuses.sorted())")
            let parameters = operation.parameterRefs.compactMap { document.parameters[$0] }
            #expect(parameters.count == operation.parameterRefs.count, "\(name): unknown parameter in \(operation.parameterRefs)")

            // The path's `{name}`s are exactly its path parameters.
            let templated = Set(operation.path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }
                .map { String($0.dropFirst().dropLast()) })
            let pathParameters = Set(parameters.filter { $0.location == "path" }.map(\.name))
            #expect(templated == pathParameters, "\(name): path parameters \(pathParameters.sorted())")

            let checksAParameter = parameters.contains {
                if case .refused = Self.parameterProbe(for: $0) { true } else { false }
            }
            let takesJSON = operation.requestMediaTypes.contains("application/json")
            #expect(operation.hasBody == !operation.requestMediaTypes.isEmpty, "\(name): a request body names its media types")
            if takesJSON || checksAParameter { #expect(operation.statuses.contains(400), "\(name) takes input but documents no 400") }
            // A sync stream answers 200 at once: what its exchanges meet (too large, a full disk)
            // is said in their frames.
            let answersInFrames = operation.path == "/v1/sync:stream"
            if operation.hasBody, !answersInFrames {
                #expect(operation.statuses.contains(413), "\(name) takes a body but documents no 413")
            }
            if !Self.isRead(operation) {
                #expect(operation.statuses.contains(503), "\(name) writes but documents no 503 (shutting down)")
                if Self.writesTheStore(operation), !answersInFrames {
                    #expect(operation.statuses.contains(507), "\(name) writes but documents no 507 (the disk is full)")
                }
            }
            if parameters.contains(where: { $0.location == "header" && $0.name == "If-Match" }) {
                #expect(operation.statuses.contains(412), "\(name) takes If-Match but documents no 412")
            }
            // A `HEAD`'s answer has no body, so no media type.
            if let success = successes.first, success != 204, operation.method != "HEAD" {
                let types = operation.mediaTypes[success] ?? []
                #expect(!types.isEmpty, "\(name): its \(success) answer names no media type")
                if types.contains("application/json") {
                    #expect(operation.jsonSchemas[success] != nil, "\(name): its \(success) answer names no JSON schema")
                }
            }
        }
        for name in [
            "ResolvedPreference", "ChainLayer", "WriteResult", "PreferenceList", "SchemaList", "PreferenceSchema",
            "PreferenceBatch", "PreferenceOperation", "PrefsDump", "ChangeEvent", "ServiceStatus", "Error",
            "Draft", "Poll", "Attachment", "DraftValidation", "ValidationProblem", "DraftInput", "DraftPatch",
            "AttachmentPatch", "AttachmentResult", "DraftList", "ThreadAnswer", "WatchEvent", "PreferenceValue",
            "SyncRequest", "Mutation", "SyncAnswer", "Result", "Change", "Snapshot", "SyncConflict", "Side", "SyncStatus",
            "DraftMutation", "DraftResult", "DraftState",
        ] {
            #expect(document.schemas[name] != nil, "openapi.yaml has no components/schemas/\(name)")
        }
        let download = document.operations.first { $0.name == "GET /v1/drafts/{draft}/attachments/{attachment}/data" }
        #expect(download?.headers[200]?.contains("Content-Disposition") == true, "the download documents no Content-Disposition")
    }

    /// The Swift wire types, fully populated and encoded as the server encodes them, have exactly
    /// the fields the document names — including the ones live answers rarely carry — and, for
    /// the newer types, use every field it names (both ways). Request types decode back from
    /// their encoding, so every documented field is one the server accepts.
    @Test func theWireTypesEncodeToTheDocumentedShapes() throws {
        let document = try Self.document()
        let encoder = Self.wireEncoder()
        func encoded(_ value: some Encodable) throws -> Any {
            try JSONSerialization.jsonObject(with: try encoder.encode(value), options: .fragmentsAllowed)
        }
        func check(_ value: some Encodable, as schema: String) throws {
            let problems = document.problems(in: try encoded(value), as: schema, at: schema)
            #expect(problems.isEmpty, "\(problems)")
        }
        /// Checks each value, and that together they carry every property the schema names.
        func checkEvery<T: Encodable>(_ values: [T], as schema: String) throws {
            var seen = Set<String>()
            for value in values {
                let json = try encoded(value)
                let problems = document.problems(in: json, as: schema, at: schema)
                #expect(problems.isEmpty, "\(problems)")
                if let object = json as? [String: Any] { seen.formUnion(object.keys) }
            }
            let unused = (document.schemas[schema]?.properties ?? []).subtracting(seen)
            #expect(unused.isEmpty, "\(schema) documents \(unused.sorted()), which no encoded Swift value has")
        }
        func roundTrips<T: Codable & Equatable>(_ value: T) throws {
            let decoded = try Self.wireDecoder().decode(T.self, from: try encoder.encode(value))
            #expect(decoded == value, "\(T.self) does not decode back from its encoding")
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
            ServiceStatus(
                version: prefsVersion, database: "/tmp/p.sqlite", revision: 9, oldestRevision: 1, uptimeSeconds: 1.5,
                pid: 42, counts: .init(keys: 1, values: 2, locks: 3, schemas: 4, overrides: 5, watchers: 6)),
            as: "ServiceStatus")

        // Drafts, both ways.
        let draftID = UUID()
        let poll = Draft.Poll(options: ["yes", "no"], expiresIn: 3600, multiple: true)
        let attachment = Attachment(
            id: UUID(), draft: draftID, position: 0, kind: .image, mimeType: "image/png", filename: "a.png", byteSize: 3,
            sha256: String(repeating: "ab", count: 32), altText: "A cat.", width: 640, height: 480)
        let draft = Draft(
            id: draftID, account: "alice", thread: "t1", position: 0, replyTo: "109", text: "Hello",
            contentWarning: "cw", visibility: .unlisted, language: "pt-BR", sensitive: true, poll: poll,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000.123), updatedAt: Date(), revision: 3,
            attachments: [attachment])
        var copy = draft
        copy.id = UUID()
        copy.attachments = []
        copy.conflictOf = draftID
        copy.deletedElsewhere = true
        try checkEvery([draft, copy], as: "Draft")
        try checkEvery([poll], as: "Poll")
        try checkEvery([attachment], as: "Attachment")
        let problem = ValidationProblem(code: "too_long", field: "text", message: "Too long.")
        try checkEvery([problem], as: "ValidationProblem")
        try checkEvery([DraftValidation(problems: [problem], revision: 3)], as: "DraftValidation")
        try checkEvery([AttachmentResult(attachment: attachment, draft: draft)], as: "AttachmentResult")
        let input = DraftInput(
            account: "alice", text: "Hi", thread: "t1", position: 0, replyTo: "109", contentWarning: "cw",
            visibility: .direct, language: "en", sensitive: false, poll: poll)
        try checkEvery([input], as: "DraftInput")
        try roundTrips(input)
        var patch = DraftPatch()
        patch.text = .set("Hi")
        patch.thread = .set("t2")
        patch.position = .set(1)
        patch.replyTo = .set("110")
        patch.contentWarning = .set("cw")
        patch.visibility = .set(.private)
        patch.language = .set("de")
        patch.sensitive = .set(true)
        patch.poll = .set(poll)
        var clearing = DraftPatch()
        clearing.thread = .clear
        clearing.contentWarning = .clear
        clearing.poll = .clear
        try checkEvery([patch, clearing], as: "DraftPatch")
        try roundTrips(patch)
        try roundTrips(clearing)
        let attachmentPatch = AttachmentPatch(altText: .set("A dog."), position: .set(0))
        try checkEvery([attachmentPatch, AttachmentPatch(altText: .clear)], as: "AttachmentPatch")
        try roundTrips(attachmentPatch)
        try roundTrips(AttachmentPatch(altText: .clear))

        try checkEvery(
            [
                ChangeEvent(
                    revision: 9, kind: .set, key: "ui.size", scope: "/a", value: 3, source: .scope("/a")),
                ChangeEvent(
                    revision: 10, kind: .attachmentUpdated, draft: draftID.uuidString, attachment: attachment.id.uuidString,
                    account: "alice", thread: "t2", previousThread: "t1", draftRevision: 4, valid: true),
            ],
            as: "ChangeEvent")
        // History, the audit log, diffs and reverts.
        let record = ChangeRecord(
            revision: 9, time: Date(timeIntervalSince1970: 1_800_000_000.123), kind: .set, key: "ui.size", scope: "/a",
            value: 3, oldValue: 2, author: ChangeAuthor(name: "alice", agent: "prefsctl/0.1.0 (prefsctl[42])", host: "db1"),
            reason: "Why.")
        let draftRecord = ChangeRecord(
            revision: 10, time: Date(), kind: .attachmentAdded, draft: draftID.uuidString, attachment: attachment.id.uuidString,
            account: "alice", thread: "t1", author: ChangeAuthor(name: "token:default"))
        let tokenRecord = ChangeRecord(
            revision: 11, time: Date(), kind: .tokenCreated, scope: "/accounts", value: ["name": "ci", "role": "reader"],
            author: ChangeAuthor(name: "alice"))
        try checkEvery([record, draftRecord, tokenRecord], as: "ChangeRecord")
        // Named tokens.
        let token = AccessToken(
            name: "ci", role: .writer, scope: "/accounts", created: Date(), createdBy: "alice", lastUsed: Date())
        try checkEvery([token, AccessToken(name: "x", role: .admin, scope: "/", created: Date(), createdBy: "token:default")], as: "AccessToken")
        try checkEvery([CreatedAccessToken(token: token, secret: "prefsd_" + String(repeating: "A", count: 43), revision: 3)], as: "CreatedAccessToken")
        try checkEvery([TokenRequest(name: "ci", role: .reader, scope: "/accounts")], as: "TokenRequest")
        try checkEvery(
            [ConsoleLink(url: "http://127.0.0.1:7878/ui/#signin=abc", expiresAt: Date(), role: .reader, scope: "/accounts")],
            as: "ConsoleLink")
        try checkEvery([ConsoleLinkRequest(role: .reader, scope: "/accounts")], as: "ConsoleLinkRequest")
        let roles = Set(document.schemas["AccessRole"]?.values ?? [])
        #expect(roles == Set(AccessRole.allCases.map(\.rawValue)), "AccessRole: \(roles.sorted())")
        let query = ChangeQuery(
            prefix: "ui.", scope: "/a", author: "alice", since: .revision(4), until: .time(Date()), limit: 5, order: .oldestFirst)
        try checkEvery([query], as: "ChangeQuery")
        try checkEvery([ChangePage(changes: [record, draftRecord], oldestRevision: 1, next: query)], as: "ChangePage")
        let resolvedNow = ResolvedPreference(key: "ui.size", scope: "/a", value: 3, source: .scope("/a"), revision: 9)
        let step = PreferenceHistory.Step(change: record, value: 3, source: .scope("/a"), previousValue: 2, previousSource: .default)
        try checkEvery([step], as: "HistoryStep")
        try checkEvery(
            [PreferenceHistory(key: "ui.size", scope: "/a", current: resolvedNow, steps: [step], oldestRevision: 1, next: 8)],
            as: "PreferenceHistory")
        let difference = PreferenceDiff.Difference(key: "ui.size", before: resolvedNow, after: resolvedNow, change: record)
        try checkEvery([difference], as: "PreferenceDifference")
        try checkEvery([PreferenceDiff(from: 1, to: 9, scope: "/a", differences: [difference])], as: "PreferenceDiff")
        try checkEvery(
            [RevertRequest(key: "ui.size", scope: "/a", toRevision: 3), RevertRequest(prefix: "ui.", scope: "/", toRevision: 3)],
            as: "RevertRequest")

        // Sync, both ways for the request.
        let stamp = SyncStamp(milliseconds: 1_795_858_491_198, counter: 2, device: "laptop")
        let mutation = SyncRequest.Mutation(
            seq: 3, key: "ui.tags", scope: "/accounts/alice", value: ["a"], base: 7, baseValue: [], stamp: stamp, ifAbsent: true,
            author: "alice (prefsctl)", reason: "Why.")
        let reset = SyncRequest.Mutation(seq: 4, key: "ui.tags", scope: "/accounts/alice", value: nil, base: 8, stamp: stamp)
        try checkEvery([mutation, reset], as: "Mutation")
        var pushed = draft
        (pushed.createdAt, pushed.updatedAt) = (Date(timeIntervalSince1970: 1_800_000_000), Date(timeIntervalSince1970: 1_800_000_001))
        let draftChange = DraftMutation(
            seq: 5, id: draftID, base: 2, draft: pushed, stamp: stamp, stamps: [.text: stamp, .language: stamp],
            author: "alice (prefsctl)", reason: "Why.")
        let draftDelete = DraftMutation(seq: 6, id: copy.id, base: 1, draft: nil, stamp: stamp)
        var longer = draftChange
        longer.draft?.text = String(repeating: "A long draft. ", count: 20)
        let draftEdit = longer.sendingText(asEditOf: String(repeating: "A long draft. ", count: 19))
        #expect(draftEdit.textEdit != nil)
        try checkEvery([draftChange, draftDelete, draftEdit], as: "DraftMutation")
        try checkEvery([TextSplice(at: 3, delete: 1, insert: "x")], as: "TextSplice")
        let syncRequest = SyncRequest(cursor: 7, mutations: [mutation, reset], drafts: [draftEdit, draftDelete], wait: 25_000)
        try checkEvery([syncRequest], as: "SyncRequest")
        try roundTrips(syncRequest)
        let syncResult = SyncAnswer.Result(
            seq: 3, outcome: .resolved, key: "ui.tags", scope: "/accounts/alice", revision: 9, value: ["a", "b"], conflict: 10)
        try checkEvery([syncResult], as: "Result")
        let draftResult = SyncAnswer.DraftResult(
            seq: 5, outcome: .resolved, id: draftID, revision: 4, draft: draft, deleted: nil, stamps: [.language: stamp], copy: copy,
            conflict: 10)
        let draftGone = SyncAnswer.DraftResult(seq: 6, outcome: .applied, id: copy.id, revision: 2, draft: nil, deleted: true)
        try checkEvery([draftResult, draftGone], as: "DraftResult")
        let draftState = SyncAnswer.DraftState(id: draftID, revision: 4, draft: draft)
        var stepped = draftState
        stepped.draft?.text = ""
        stepped.text = .init(from: 2, steps: [TextSplice(at: 0, delete: 0, insert: ""), TextSplice(at: 1, delete: 2, insert: "ey")])
        try checkEvery([draftState, SyncAnswer.DraftState(id: copy.id, revision: 2, draft: nil), stepped], as: "DraftState")
        try checkEvery([stepped.text!], as: "TextSteps")
        let syncChange = SyncAnswer.Change(
            revision: 11, kind: .set, key: "ui.tags", scope: "/accounts/alice", value: ["a"], stamp: stamp, author: "token:laptop",
            reason: "Why.")
        try checkEvery([syncChange], as: "Change")
        let snapshot = SyncAnswer.Snapshot(
            revision: 11, values: [.init(key: "ui.tags", scope: "/accounts", value: ["x"], revision: 5)],
            locks: [.init(key: "ui.tags", scope: "/", revision: 6)], schemas: ["ui.tags": schema], drafts: [draft])
        try checkEvery([snapshot], as: "Snapshot")
        try checkEvery([snapshot.values[0]], as: "SnapshotValue")
        try checkEvery([snapshot.locks[0]], as: "SnapshotLock")
        try checkEvery(
            [
                SyncAnswer(
                    device: "laptop", role: .writer, scope: "/accounts/alice", results: [syncResult], draftResults: [draftResult],
                    snapshot: snapshot, changes: [syncChange], drafts: [draftState], cursor: 11, more: true, newest: 12)
            ], as: "SyncAnswer")
        try checkEvery([SyncStreamRequest(id: 1, request: syncRequest)], as: "SyncStreamRequest")
        try checkEvery(
            [
                SyncStreamAnswer(
                    id: 1,
                    answer: SyncAnswer(
                        device: "laptop", role: .writer, scope: "/accounts/alice", results: [], snapshot: nil, changes: [], cursor: 11,
                        newest: 11)),
                SyncStreamAnswer(id: nil, error: PrefsError(.invalidRequest, "Why.")),
            ], as: "SyncStreamAnswer")
        let winner = SyncConflict.Side(value: ["a", "b"], device: "phone", stamp: stamp, revision: 9, sequence: 12)
        let loser = SyncConflict.Side(value: nil, device: "laptop", stamp: stamp, sequence: 3)
        try checkEvery([winner, loser, SyncConflict.Side(value: nil)], as: "Side")
        let conflict = SyncConflict(
            revision: 10, key: "ui.tags", scope: "/accounts/alice", rule: .init(.union), winner: winner, losers: [loser],
            time: Date(timeIntervalSince1970: 1_795_858_491.5), detail: "Why.")
        try checkEvery([conflict], as: "SyncConflict")
        try checkEvery([ConflictList(conflicts: [conflict])], as: "ConflictList")
        let failed = SyncStatus.Exchange(time: Date(timeIntervalSince1970: 1_795_858_491.5), succeeded: false, error: "unreachable: Gone.", pushed: 0, pulled: 0)
        try checkEvery([failed], as: "SyncExchange")
        try checkEvery(
            [
                SyncStatus(
                    upstream: "https://prefs.example:7878", device: "laptop", role: .writer, scope: "/accounts/alice", cursor: 11,
                    upstreamRevision: 12, outbox: 2, snapshotTaken: true, lastExchange: failed, lastSuccess: Date(timeIntervalSince1970: 1_795_858_400),
                    conflicts: 1)
            ], as: "SyncStatus")
        let rules = Set(document.enumValues(of: "SyncConflict", property: "rule"))
        let draftRules = [SyncConflict.Rule.draftMerge, .conflictedCopy, .editBeatsDelete].map(\.rawValue)
        #expect(rules == Set(MergeRule.allCases.map(\.rawValue) + ["refused"] + draftRules), "SyncConflict.rule: \(rules.sorted())")
        let changeKinds = Set(document.enumValues(of: "Change", property: "kind"))
        #expect(changeKinds == ["set", "reset", "lock", "unlock", "schema", "conflict"], "Change.kind: \(changeKinds.sorted())")

        let compacted = ErrorBody(PrefsError(.compacted, "Gone.", oldestRevision: 21))
        let stale = ErrorBody(PrefsError(.staleRevision, "Moved on.", currentDraft: draft))
        let ahead = ErrorBody(PrefsError.ahead(since: 40, newest: 30))
        let behind = ErrorBody(PrefsError.behind(revision: 40, applied: 38))
        let staleKey = ErrorBody(
            PrefsError.staleRevision(
                expected: 3,
                current: ScopedPreference(
                    key: "a.b", scope: "/x", state: KeyState(values: ["/x": StoredValue(value: 1, revision: 7)], locks: ["/x": 8]))))
        try checkEvery([compacted, stale, ahead, staleKey], as: "Error")
        try checkEvery([try #require(staleKey.currentPreference), ScopedPreference(key: "a.b", scope: "/y", state: nil)], as: "ScopedPreference")
        let locked = ErrorBody(PrefsError(.locked, "Locked.", lock: PreferenceLock(key: "a.b", scope: "/accounts")))
        try checkEvery([compacted.error, stale.error, ahead.error, behind.error, locked.error], as: "ErrorDetail")

        // The documented enums are exactly the Swift ones (`unreachable` too: a device's sync:now answers it).
        let codes = Set(document.enumValues(of: "ErrorDetail", property: "code"))
        #expect(codes == Set(PrefsError.Code.allCases.map(\.rawValue)), "ErrorDetail.code: \(codes.sorted())")
        let visibilities = Set(document.schemas["Visibility"]?.values ?? [])
        #expect(visibilities == Set(Draft.Visibility.allCases.map(\.rawValue)), "Visibility: \(visibilities.sorted())")
        let kinds = Set(document.schemas["AttachmentKind"]?.values ?? [])
        #expect(kinds == Set(Attachment.Kind.allCases.map(\.rawValue)), "AttachmentKind: \(kinds.sorted())")
        // ChangeEvent.Kind is open (a struct), so its kinds are listed here.
        let eventKinds: [ChangeEvent.Kind] = [
            .set, .reset, .lock, .unlock, .schema, .conflict, .draftCreated, .draftUpdated, .draftDeleted, .attachmentAdded,
            .attachmentUpdated, .attachmentRemoved, .validation, .tokenCreated, .tokenRevoked, .progress, .overflow, .shutdown,
            .revoked,
        ]
        let documentedKinds = Set(document.enumValues(of: "ChangeEvent", property: "kind"))
        #expect(documentedKinds == Set(eventKinds.map(\.rawValue)), "ChangeEvent.kind: \(documentedKinds.sorted())")
        // The audit log's kinds are the changes', without the notices.
        let recordKinds = Set(document.enumValues(of: "ChangeRecord", property: "kind"))
        #expect(
            recordKinds == Set(eventKinds.filter { !$0.isNotice }.map(\.rawValue)), "ChangeRecord.kind: \(recordKinds.sorted())")
    }

    // MARK: - The daemon against the document

    @Test func everyOperationAnswersOnlyWhatTheDocumentLists() async throws {
        let document = try Self.document()
        // A short change log, so an old `since` is compacted (410); small value and attachment
        // limits, so 413 is cheap to reach.
        // On TCP too, so that the console's links have an address.
        let (daemon, port) = try await TCPListenerTests.daemon(
            token: Self.contractToken,
            arguments: ["--retain-changes", "4", "--max-value-bytes", "1024", "--max-attachment-bytes", "1024"])
        let client = daemon.client
        // Sync: two devices' tokens, and a device daemon syncing with this one as the reader.
        let laptop = try await client.createToken(named: "device-laptop", role: .writer, scope: "/accounts/alice").secret
        let phone = try await client.createToken(named: "device-phone", role: .reader, scope: "/accounts/alice").secret
        let (replicaFolder, phoneFile) = try TCPListenerTests.folder(holdingToken: phone)
        let replica = try await Daemon(
            arguments: ["--upstream", "http://127.0.0.1:\(port)", "--upstream-token-file", phoneFile], folder: replicaFolder)
        let routes = Routes(port: port, replicaSocket: replica.socketPath)
        try await client.register(schemas: ["ui.size": PreferenceSchema(type: .int, defaultValue: 5, minimum: 1, maximum: 10)])
        try await client.set("ui.size", to: 3, scope: "/accounts/alice")
        try await client.set("locked.key", to: 1, scope: "/a")
        try await client.lock("locked.key", scope: "/a")
        try await client.lock("unlock.me", scope: "/")
        let fixtures = try await Self.makeDraftFixtures(client)
        for index in 0..<8 { try await client.set("filler.key", to: .integer(Int64(index))) }
        #expect(try await client.status().oldestRevision > 2, "the change log should have been compacted")

        let probes = Self.probes(fixtures) + Self.syncProbes(laptop: laptop, phone: phone)
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

        let decoder = Self.wireDecoder()
        var checked = Set<String>()
        for probe in all {
            guard let operation = documented[probe.operation] else { continue }
            let revision = try await client.status().revision
            let draftRevision = try await Self.draftRevision(for: probe, socket: daemon.socketPath)
            let answer = try await Self.send(
                probe, socket: daemon.socketPath, routes: routes, revision: revision, draftRevision: draftRevision)
            let label = "\(probe.method) \(probe.target(revision: revision)) (\(probe.note))"
            let text = String(decoding: answer.body.prefix(2000), as: UTF8.self)
            // What a probe sends is documented: its query items and headers (but the body's type).
            let parameters = Set(operation.parameterRefs.compactMap { document.parameters[$0] }.map { "\($0.location) \($0.name)" })
            for (name, _) in probe.query {
                #expect(parameters.contains("query \(name)"), "\(label): query parameter '\(name)' is not documented")
            }
            for (name, _) in probe.headers where name.lowercased() != "content-type" {
                #expect(parameters.contains("header \(name)"), "\(label): header '\(name)' is not documented")
            }
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
                    if let decodes = Self.swiftTypes[schema] {
                        do { try decodes(answer.body) } catch { Issue.record("\(label): does not decode as \(schema): \(error)") }
                    }
                }
                probe.checkAnswer?(answer.body)
            } else if answer.status == 304 || probe.method == "HEAD" {
                #expect(answer.body.isEmpty, "\(label): a 304 or a HEAD's answer has no body")
            } else if probe.path.hasPrefix("/ofrep/"), let schema = operation.jsonSchemas[answer.status] {
                // OFREP's own errors: `{key?, errorCode, errorDetails}`.
                let json = try? JSONSerialization.jsonObject(with: answer.body)
                #expect((json as? [String: Any])?["errorCode"] as? String == probe.expectedCode, "\(label): \(text)")
                if let json {
                    let problems = document.problems(in: json, as: schema, at: schema)
                    #expect(problems.isEmpty, "\(label): \(problems)")
                }
            } else {
                let error = try? decoder.decode(ErrorBody.self, from: answer.body)
                #expect(error != nil, "\(label): the error body is not an ErrorBody: \(text)")
                #expect(error?.error.code.isEmpty == false, "\(label): the error has no code")
                if let code = probe.expectedCode { #expect(error?.error.code == code, "\(label): \(text)") }
                if answer.status == 410 { #expect(error?.error.oldestRevision != nil, "\(label): no oldestRevision") }
                if answer.status == 412, probe.path == "/v1/prefs:revert" {
                    #expect(error?.current == nil, "\(label): a revert's 412 carries no draft")
                    #expect(error?.currentPreference == nil, "\(label): a revert's 412 carries no key (it may be a prefix)")
                } else if answer.status == 412, let key = probe.pathParameters["key"] {
                    #expect(error?.currentPreference?.key == key, "\(label): 412 without the key as it is now: \(text)")
                    #expect(error?.current == nil, "\(label): a preference's 412 carries no draft")
                } else if answer.status == 412 {
                    #expect(
                        error?.current?.id.uuidString.lowercased() == probe.pathParameters["draft"]?.lowercased(),
                        "\(label): 412 without the current draft: \(text)")
                } else {
                    #expect(error?.current == nil, "\(label): only a 412 carries `current`")
                    #expect(error?.currentPreference == nil, "\(label): only a 412 carries `currentPreference`")
                }
                if let json = try? JSONSerialization.jsonObject(with: answer.body) {
                    let problems = document.problems(in: json, as: "Error", at: "Error")
                    #expect(problems.isEmpty, "\(label): \(problems)")
                }
            }
        }
        #expect(checked == Set(documented.keys), "operations left unchecked: \(Set(documented.keys).subtracting(checked))")
        await replica.expectCleanStop()
    }

    /// The success case of `GET /v1/watch`, read with a bound: a replayed event's `id:`,
    /// `event:` and `data:` agree with each other and with the `ChangeEvent` schema, and the
    /// client decodes the same stream — for a key, a scope, and a draft, a thread and an account.
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

        // Draft watches: a draft moved out of its thread, seen by its id, its old thread and
        // its account.
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "Hello", thread: "t1"))
        let beforeMove = try await client.status().revision
        var leave = DraftPatch()
        leave.thread = .clear
        _ = try await client.updateDraft(draft.id, leave, ifRevision: 1)
        for query in ["draft=\(draft.id.uuidString)", "thread=t1", "account=alice"] {
            let target = "/v1/watch?\(query)&since=\(beforeMove)"
            let (status, fields) = try await Self.firstEvent(socket: socket, target: target)
            #expect(status == 200, "\(target)")
            let data = try #require(fields["data"], "\(target): no data in \(fields)")
            let json = try JSONSerialization.jsonObject(with: Data(data.utf8))
            let problems = document.problems(in: json, as: "ChangeEvent", at: "ChangeEvent")
            #expect(problems.isEmpty, "\(target): \(problems)")
            let event = try JSONDecoder().decode(ChangeEvent.self, from: Data(data.utf8))
            #expect(fields["id"] == String(event.revision), "\(target): \(fields)")
            #expect(fields["event"] == "draft.updated", "\(target): \(fields)")
            #expect(event.revision == beforeMove + 1, "\(target)")
            #expect(event.draft == draft.id.uuidString, "\(target)")
            #expect(event.account == "alice", "\(target)")
            #expect(event.thread == nil, "\(target): the draft left its thread")
            #expect(event.previousThread == "t1", "\(target)")
            #expect(event.draftRevision == 2, "\(target)")
            #expect(event.valid == true, "\(target)")
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

    /// The attachment download, read raw: the documented headers are there, `Content-Type` is
    /// the stored MIME type (`application/octet-stream` when nothing better was known), and
    /// `Content-Disposition` names the file, with RFC 6266's `filename*` for a name that is not
    /// ASCII.
    @Test func theAttachmentDownloadCarriesTheDocumentedHeaders() async throws {
        let document = try Self.document()
        let download = try #require(document.operations.first { $0.name == "GET /v1/drafts/{draft}/attachments/{attachment}/data" })
        let documentedHeaders = download.headers[200] ?? []
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice"))
        let uploads: [(AttachmentUpload, String, disposition: String)] = [
            (AttachmentUpload(filename: "photo.gif", mimeType: "image/gif"), Self.gifBytes, #"attachment; filename="photo.gif""#),
            (AttachmentUpload(filename: "blob"), "some bytes", #"attachment; filename="blob""#),
            (
                AttachmentUpload(filename: #"été "1".txt"#), "text",
                #"attachment; filename="_t_ \"1\".txt"; filename*=UTF-8''%C3%A9t%C3%A9%20%221%22.txt"#
            ),
        ]
        for (upload, content, disposition) in uploads {
            let bytes = AsyncThrowingStream<Data, any Error> { $0.yield(Data(content.utf8)); $0.finish() }
            let result = try await client.addAttachment(to: draft.id, upload, ifRevision: nil, bytes: bytes)
            let attachment = result.attachment
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(
                "GET /v1/drafts/\(draft.id.uuidString)/attachments/\(attachment.id.uuidString)/data HTTP/1.1\r\n"
                    + "Host: prefsd\r\nConnection: close\r\n\r\n")
            let raw = await socket.readToEnd()
            let parts = raw.components(separatedBy: "\r\n\r\n")
            let head = parts[0].components(separatedBy: "\r\n")
            #expect(head.first?.hasPrefix("HTTP/1.1 200") == true, "\(upload.filename): \(raw)")
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            for name in documentedHeaders.sorted() {
                #expect(headers[name.lowercased()] != nil, "\(upload.filename): no \(name) in \(headers)")
            }
            let expectedType = upload.mimeType ?? Filename.mimeType(for: upload.filename)
            #expect(attachment.mimeType == expectedType, "\(upload.filename)")
            #expect(headers["content-type"] == attachment.mimeType, "\(upload.filename): \(headers)")
            #expect(headers["content-length"] == String(attachment.byteSize), "\(upload.filename): \(headers)")
            #expect(headers["content-disposition"] == disposition, "\(upload.filename): \(headers)")
            #expect(parts.dropFirst().joined(separator: "\r\n\r\n") == content, "\(upload.filename): \(raw)")
        }
    }
}

// MARK: - Probes

extension OpenAPIContractTests {
    /// One request to send, and the status it must get.
    struct Probe: Sendable {
        var method: String
        /// The documented path, e.g. `/v1/prefs/{key}`.
        var path: String
        /// The value of each `{name}` in the path.
        var pathParameters: [String: String]
        /// Query items; the value `$revision` stands for the store's revision when sent.
        var query: [(String, String)] = []
        /// Headers; the value `$revision` stands for the store's revision when sent, and
        /// `$draftRevision` for the revision of the draft in the path.
        var headers: [(String, String)] = []
        /// The body; `$revision` in it stands for the store's revision when sent.
        var body: String?
        var expected: Int
        var expectedCode: String?
        var note: String
        /// More checks of a 2xx answer's body.
        var checkAnswer: (@Sendable (Data) -> Void)?
        /// Where it goes.
        var route = Route.socket

        init(
            _ method: String, _ path: String, key: String? = nil, params: [String: String] = [:],
            query: [(String, String)] = [], headers: [(String, String)] = [], body: String? = nil, route: Route = .socket,
            expect expected: Int, code: String? = nil, _ note: String, check: (@Sendable (Data) -> Void)? = nil
        ) {
            self.route = route
            self.method = method
            self.path = path
            self.pathParameters = params
            if let key { pathParameters["key"] = key }
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
            var segmentAllowed = allowed
            segmentAllowed.remove("/")
            let path = self.path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                guard segment.hasPrefix("{"), segment.hasSuffix("}") else { return String(segment) }
                let name = String(segment.dropFirst().dropLast())
                guard var value = pathParameters[name] else {
                    Issue.record("\(operation): no value for {\(name)}")
                    return String(segment)
                }
                if value == "$revision" { value = String(revision) }
                return value.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? value
            }.joined(separator: "/")
            let items = query.map { name, value in
                let value = value == "$revision" ? String(revision) : value
                return "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
            }
            return items.isEmpty ? path : path + "?" + items.joined(separator: "&")
        }

        func resolvedHeaders(revision: Revision, draftRevision: Int64?) -> [(String, String)] {
            headers.map { name, value in
                let value = value == "$revision" ? String(revision) : value
                return (name, value.replacingOccurrences(of: "$draftRevision", with: String(draftRevision ?? 0)))
            }
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

    /// Where a probe goes: the daemon's socket (its owner, an admin at `/`), the device daemon's
    /// socket, or the daemon's TCP listener with a named token's secret (a device's exchange
    /// needs one).
    enum Route: Sendable {
        case socket
        case replica
        case bearer(String)
    }

    /// The device daemon's socket and the daemon's TCP port, for the probes that go there.
    struct Routes: Sendable {
        var port: UInt16
        var replicaSocket: String
    }

    /// The drafts the probes work on, made before they run.
    struct DraftFixtures: Sendable {
        /// alice's draft at position 0 of thread t1, at a revision above 1, with two attachments.
        var main: String
        /// alice's draft at position 1 of thread t1; a probe deletes it.
        var doomed: String
        /// An attachment of `main`, and its bytes.
        var photo: String
        var photoBytes: String
        /// An attachment of `main`; a probe removes it.
        var spare: String
    }

    /// The first bytes of a 2×1 GIF, as text (its size fields are ASCII control characters).
    static let gifBytes = "GIF89a\u{2}\u{0}\u{1}\u{0}"

    static func makeDraftFixtures(_ client: PrefsClient) async throws -> DraftFixtures {
        func bytes(_ text: String) -> AsyncThrowingStream<Data, any Error> {
            AsyncThrowingStream { $0.yield(Data(text.utf8)); $0.finish() }
        }
        let main = try await client.createDraft(DraftInput(account: "alice", text: "Hello", thread: "t1", contentWarning: "cw"))
        let doomed = try await client.createDraft(DraftInput(account: "alice", text: "Second", thread: "t1"))
        let photoBytes = gifBytes
        let photo = try await client.addAttachment(
            to: main.id, AttachmentUpload(filename: "photo.gif", mimeType: "image/gif"), ifRevision: 1, bytes: bytes(photoBytes))
        let spare = try await client.addAttachment(
            to: main.id, AttachmentUpload(filename: "spare.txt"), ifRevision: 2, bytes: bytes("spare"))
        return DraftFixtures(
            main: main.id.uuidString, doomed: doomed.id.uuidString, photo: photo.attachment.id.uuidString,
            photoBytes: photoBytes, spare: spare.attachment.id.uuidString)
    }

    /// The Swift type each documented success schema stands for, as a decoding: an answer must
    /// decode as it (dates included).
    static let swiftTypes: [String: @Sendable (Data) throws -> Void] = [
        "ResolvedPreference": { _ = try wireDecoder().decode(ResolvedPreference.self, from: $0) },
        "WriteResult": { _ = try wireDecoder().decode(WriteResult.self, from: $0) },
        "PreferenceSchema": { _ = try wireDecoder().decode(PreferenceSchema.self, from: $0) },
        "PrefsDump": { _ = try wireDecoder().decode(PrefsDump.self, from: $0) },
        "ServiceStatus": { _ = try wireDecoder().decode(ServiceStatus.self, from: $0) },
        "Draft": { _ = try wireDecoder().decode(Draft.self, from: $0) },
        "DraftValidation": { _ = try wireDecoder().decode(DraftValidation.self, from: $0) },
        "AttachmentResult": { _ = try wireDecoder().decode(AttachmentResult.self, from: $0) },
        "DraftList": { _ = try wireDecoder().decode(DraftListAnswer.self, from: $0) },
        "ThreadAnswer": { _ = try wireDecoder().decode(ThreadAnswer.self, from: $0) },
        "PreferenceHistory": { _ = try wireDecoder().decode(PreferenceHistory.self, from: $0) },
        "ChangePage": { _ = try wireDecoder().decode(ChangePage.self, from: $0) },
        "PreferenceDiff": { _ = try wireDecoder().decode(PreferenceDiff.self, from: $0) },
        "CreatedAccessToken": { _ = try wireDecoder().decode(CreatedAccessToken.self, from: $0) },
        "TokenList": { _ = try wireDecoder().decode(TokenListAnswer.self, from: $0) },
        "OFREPEvaluationSuccess": { _ = try wireDecoder().decode(FlagAnswer.self, from: $0) },
        "OFREPBulkEvaluationSuccess": { _ = try wireDecoder().decode(FlagsAnswer.self, from: $0) },
        "OFREPConfiguration": { _ = try wireDecoder().decode(OFREPConfigurationAnswer.self, from: $0) },
        "ConsoleLink": { _ = try wireDecoder().decode(ConsoleLink.self, from: $0) },
        "ConsoleSession": { _ = try wireDecoder().decode(ConsoleSessionAnswer.self, from: $0) },
        "SyncAnswer": { _ = try WireJSON.decode(SyncAnswer.self, from: $0) },
        "SyncStatus": { _ = try wireDecoder().decode(SyncStatus.self, from: $0) },
        "ConflictList": { _ = try WireJSON.decode(ConflictList.self, from: $0) },
    ]

    /// `ConsoleSession`, which has no public Swift type.
    struct ConsoleSessionAnswer: Decodable {
        var secret: String?
        var name: String
        var role: AccessRole
        var scope: ScopePath
        var expiresAt: Date?
    }

    /// OFREP's answers, as an SDK reads them.
    struct FlagAnswer: Decodable {
        var key: String
        var value: JSONValue
        var reason: String
        var variant: String
        var metadata: [String: JSONValue]
    }

    struct FlagsAnswer: Decodable {
        var flags: [FlagAnswer]
    }

    struct OFREPConfigurationAnswer: Decodable {
        struct Capabilities: Decodable {
            struct Polling: Decodable {
                var enabled: Bool
                var minPollingIntervalMs: Int
            }
            struct CacheInvalidation: Decodable { var polling: Polling }
            struct FlagEvaluation: Decodable { var supportedTypes: [String] }
            var cacheInvalidation: CacheInvalidation
            var flagEvaluation: FlagEvaluation
        }
        var name: String
        var capabilities: Capabilities
    }

    /// `TokenList`, which has no public Swift type.
    struct TokenListAnswer: Decodable {
        var tokens: [AccessToken]
    }

    /// `DraftList` and `ThreadAnswer`, which have no public Swift type.
    struct DraftListAnswer: Decodable {
        var drafts: [Draft]
    }

    struct ThreadAnswer: Decodable {
        var thread: String
        var drafts: [Draft]
    }

    static func decode<T: Decodable>(_ type: T.Type, _ body: Data) -> T? {
        try? wireDecoder().decode(type, from: body)
    }

    /// Well-formed requests for every operation (the first 2xx one of each is also the base its
    /// malformed variants are made from), and requests that reach the documented non-400 errors.
    /// They run in order against the state `everyOperationAnswersOnlyWhatTheDocumentLists` sets up.
    static func probes(_ fixtures: DraftFixtures) -> [Probe] {
        let big = "\"" + String(repeating: "x", count: 2000) + "\""
        let longText = String(repeating: "x", count: DraftFieldRules.maximumTextLength + 1)
        let main = fixtures.main
        let unknown = unknownID
        return [
            Probe("GET", "/v1/status", expect: 200, "status"),
            Probe(
                "GET", "/v1/metrics", expect: 200, "metrics",
                check: { body in #expect(String(decoding: body, as: UTF8.self).contains("# TYPE prefsd_requests_total counter")) }),

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
            Probe(
                "GET", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/alice"), ("atRevision", "$revision")],
                expect: 200, "as it was at the newest revision",
                check: { body in #expect((try? JSONDecoder().decode(ResolvedPreference.self, from: body))?.value == 3) }),
            Probe(
                "GET", "/v1/prefs/{key}", key: "ui.size", query: [("atRevision", "0")], expect: 410, code: "compacted",
                "at a revision before the change log"),
            Probe(
                "GET", "/v1/prefs/{key}", key: "ui.size", query: [("atRevision", "999999")], expect: 400, code: "invalid_request",
                "at a revision beyond the newest"),

            // History and the audit log, while the newest changes are the filler's.
            Probe(
                "GET", "/v1/prefs/{key}/history", key: "filler.key", query: [("limit", "2")], expect: 200, "a page of steps",
                check: { body in
                    let history = decode(PreferenceHistory.self, body)
                    #expect(history?.key == "filler.key")
                    #expect(history?.steps.isEmpty == false)
                }),
            Probe("GET", "/v1/prefs/{key}/history", key: "never.set", expect: 200, "no steps"),
            Probe(
                "GET", "/v1/changes", query: [("limit", "2")], expect: 200, "a page of the audit log",
                check: { body in
                    let page = decode(ChangePage.self, body)
                    #expect(page?.changes.count == 2)
                    #expect(page?.next?.limit == 2)
                }),
            Probe(
                "GET", "/v1/changes",
                query: [("prefix", "ui."), ("scope", "/"), ("author", "nobody"), ("since", "2026-01-01T00:00:00Z"), ("until", "$revision"), ("order", "asc")],
                expect: 200, "every filter",
                check: { body in #expect(decode(ChangePage.self, body)?.changes.isEmpty == true) }),
            Probe(
                "GET", "/v1/diff", query: [("from", "$revision")], expect: 200, "nothing since the newest revision",
                check: { body in #expect(decode(PreferenceDiff.self, body)?.differences.isEmpty == true) }),
            Probe("GET", "/v1/diff", expect: 400, code: "invalid_request", "no from"),
            Probe(
                "GET", "/v1/diff", query: [("from", "$revision"), ("to", "1")], expect: 400, code: "invalid_request",
                "from after to"),
            Probe("GET", "/v1/diff", query: [("from", "0")], expect: 410, code: "compacted", "from before the change log"),
            Probe(
                "POST", "/v1/prefs:revert", body: #"{"key": "filler.key", "scope": "/", "toRevision": $revision}"#, expect: 200,
                "to the newest revision: nothing changes"),
            Probe(
                "POST", "/v1/prefs:revert", body: #"{"key": "filler.key", "scope": "/", "toRevision": 0}"#, expect: 410,
                code: "compacted", "to a revision before the change log"),
            Probe(
                "POST", "/v1/prefs:revert", headers: [("If-Match", "1")],
                body: #"{"prefix": "filler.", "scope": "/", "toRevision": $revision}"#, expect: 412, code: "stale_revision",
                "stale If-Match"),
            Probe(
                "POST", "/v1/prefs:revert", body: #"{"key": "filler.key", "prefix": "filler.", "scope": "/", "toRevision": 1}"#,
                expect: 400, code: "invalid_request", "both a key and a prefix"),
            Probe(
                "POST", "/v1/prefs:revert", body: #"{"key": "filler.key", "scope": "/", "toRevision": 1, "to": 2}"#,
                expect: 400, code: "invalid_request", "unknown field"),
            Probe(
                "POST", "/v1/prefs:revert", body: #"{"key": "filler.key", "scope": "/", "toRevision": -1}"#,
                expect: 400, code: "invalid_request", "a negative revision"),

            Probe(
                "POST", "/v1/tokens", body: #"{"name": "contract", "role": "writer", "scope": "/accounts"}"#, expect: 201,
                "a token",
                check: { body in #expect(decode(CreatedAccessToken.self, body)?.secret.hasPrefix("prefsd_") == true) }),
            Probe(
                "POST", "/v1/tokens", body: #"{"name": "contract", "role": "reader"}"#, expect: 409, code: "conflict",
                "a name taken"),
            Probe(
                "POST", "/v1/tokens", body: #"{"name": "default", "role": "reader"}"#, expect: 400, code: "invalid_request",
                "the file token's name"),
            Probe(
                "GET", "/v1/tokens", expect: 200, "every token",
                check: { body in
                    // Besides the devices' tokens, made for sync's probes.
                    #expect(decode(TokenListAnswer.self, body)?.tokens.map(\.name).filter { !$0.hasPrefix("device-") } == ["contract"])
                }),
            Probe("DELETE", "/v1/tokens/{name}", params: ["name": "contract"], expect: 200, "revoke"),
            Probe("DELETE", "/v1/tokens/{name}", params: ["name": "contract"], expect: 404, code: "not_found", "no such token"),

            Probe(
                "POST", "/ofrep/v1/evaluate/flags/{key}", key: "locked.key", body: #"{"context": {"scope": "/a/b"}}"#, expect: 200,
                "a locked flag",
                check: { body in
                    let flag = decode(FlagAnswer.self, body)
                    #expect(flag?.variant == "lock:/a" && flag?.reason == "TARGETING_MATCH" && flag?.metadata["locked"] == true)
                }),
            Probe("POST", "/ofrep/v1/evaluate/flags/{key}", key: "ui.size", expect: 200, "no body: an empty context, the default"),
            Probe(
                "POST", "/ofrep/v1/evaluate/flags/{key}", key: "nothing.here", body: "{}", expect: 404, code: "FLAG_NOT_FOUND",
                "no value, no default"),
            Probe(
                "POST", "/ofrep/v1/evaluate/flags/{key}", key: "ui.size", body: #"{"context": 3}"#, expect: 400, code: "PARSE_ERROR",
                "a context that is not an object"),
            Probe(
                "POST", "/ofrep/v1/evaluate/flags/{key}", key: "ui.size", body: #"{"context": {"scope": "nope"}}"#, expect: 400,
                code: "INVALID_CONTEXT", "a context that names no scope"),
            Probe(
                "POST", "/ofrep/v1/evaluate/flags", body: #"{"context": {"scope": "/accounts/alice"}}"#, expect: 200, "every flag",
                check: { body in #expect(decode(FlagsAnswer.self, body)?.flags.contains { $0.key == "ui.size" && $0.value == 3 } == true) }),
            Probe("POST", "/ofrep/v1/evaluate/flags", headers: [("If-None-Match", "*")], body: "{}", expect: 304, "If-None-Match: *"),
            Probe("POST", "/ofrep/v1/evaluate/flags", body: "[1]", expect: 400, code: "PARSE_ERROR", "a body that is not an object"),
            Probe("GET", "/ofrep/v1/configuration", expect: 200, "the configuration"),
            Probe("GET", "/ofrep/v1/configuration", headers: [("If-None-Match", "*")], expect: 304, "If-None-Match: *"),

            Probe("GET", "/ui", expect: 200, "the console's page"),
            Probe("GET", "/ui", headers: [("If-None-Match", "*")], expect: 304, "If-None-Match: *"),
            Probe("GET", "/ui/{file}", params: ["file": "app.js"], expect: 200, "a script of the console"),
            Probe("GET", "/ui/{file}", params: ["file": "index.html"], headers: [("If-None-Match", "*")], expect: 304, "If-None-Match: *"),
            Probe("GET", "/ui/{file}", params: ["file": "secret.txt"], expect: 404, code: "not_found", "a file the console has not"),
            Probe(
                "POST", "/ui/session", body: #"{"token": "\#(contractToken)"}"#, expect: 201, "sign in with the file token",
                check: { body in #expect(decode(ConsoleSessionAnswer.self, body)?.secret?.hasPrefix("console_") == true) }),
            Probe("POST", "/ui/session", body: #"{"token": "wrong"}"#, expect: 401, code: "unauthorized", "a wrong token"),
            Probe("POST", "/ui/session", body: #"{"code": "used-or-never-made"}"#, expect: 401, code: "unauthorized", "an unknown code"),
            Probe("POST", "/ui/session", body: "{}", expect: 400, code: "invalid_request", "neither a code nor a token"),
            Probe("POST", "/ui/session", body: #"{"code": "a", "user": "b"}"#, expect: 400, code: "invalid_request", "unknown field"),
            Probe("GET", "/ui/session", expect: 200, "who the caller is: the socket's owner"),
            Probe("DELETE", "/ui/session", expect: 204, "sign out"),
            Probe(
                "POST", "/v1/ui/links", body: #"{"role": "reader", "scope": "/accounts"}"#, expect: 201, "a read-only link",
                check: { body in #expect(decode(ConsoleLink.self, body)?.url.contains("/ui/#signin=") == true) }),
            Probe("POST", "/v1/ui/links", body: #"{"role": "boss"}"#, expect: 400, code: "invalid_request", "an unknown role"),
            Probe("POST", "/v1/ui/links", body: #"{"scope": "nope"}"#, expect: 400, code: "invalid_scope", "a bad scope"),
            Probe("POST", "/v1/ui/links", body: #"{"for": "x"}"#, expect: 400, code: "invalid_request", "unknown field"),

            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/bob")], body: "7", expect: 200, "set"),
            // The set above is the newest change, so the store's revision is the key's there.
            Probe(
                "PUT", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/bob")], headers: [("If-Match", "$revision")],
                body: "8", expect: 200, "If-Match of the key's revision there"),
            Probe(
                "PUT", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/bob")], headers: [("If-Match", "1")], body: "9",
                expect: 412, code: "stale_revision", "stale If-Match"),
            Probe(
                "PUT", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts/bob")], headers: [("If-Match", "0")], body: "9",
                expect: 412, code: "stale_revision", "If-Match 0 where a value is set"),
            Probe(
                "PUT", "/v1/prefs/{key}", key: "created.once", headers: [("If-Match", "0")], body: "1", expect: 200,
                "If-Match 0 where nothing is set: create only"),
            Probe(
                "DELETE", "/v1/prefs/{key}", key: "created.once", headers: [("If-Match", "\"1\"")], expect: 412,
                code: "stale_revision", "stale If-Match"),
            Probe("DELETE", "/v1/prefs/{key}", key: "created.once", headers: [("If-Match", "*")], expect: 200, "If-Match *"),
            Probe("PUT", "/v1/prefs/{key}", key: "locked.key", query: [("scope", "/a/b")], body: "2", expect: 409, code: "locked", "below a lock"),
            Probe("PUT", "/v1/prefs/{key}", key: "big.value", body: big, expect: 413, code: "too_large", "over --max-value-bytes"),
            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", body: "11", expect: 400, code: "invalid_value", "breaks the schema"),
            Probe("PUT", "/v1/prefs/{key}", key: "ui.size", body: "null", expect: 400, code: "invalid_value", "null"),
            Probe("PUT", "/v1/prefs/{key}", key: "exact.number", body: "12345678901234567890", expect: 200, "beyond 64 bits"),
            Probe(
                "GET", "/v1/prefs/{key}", key: "exact.number", expect: 200, "beyond 64 bits, read back exactly",
                check: { body in #expect(String(decoding: body, as: UTF8.self).contains(#""value":12345678901234567890}"#)) }),
            Probe(
                "PUT", "/v1/prefs/{key}", key: "exact.number", body: "1234567890123456789012345678901234567890123", expect: 400,
                code: "invalid_value", "more digits than are kept exactly"),

            Probe(
                "DELETE", "/v1/prefs/{key}", key: "ui.size", query: [("scope", "/accounts"), ("recursive", "1")],
                expect: 200, "recursive reset",
                check: { body in
                    #expect((try? JSONDecoder().decode(WriteResult.self, from: body))?.removed == 2, "alice's and bob's")
                }),
            Probe("DELETE", "/v1/prefs/{key}", key: "locked.key", query: [("scope", "/a/b")], expect: 409, code: "locked", "below a lock"),

            Probe("GET", "/v1/prefs", query: [("scope", "/a/b"), ("prefix", "locked.")], expect: 200, "list"),
            Probe("GET", "/v1/prefs", query: [("atRevision", "$revision")], expect: 200, "as it was at the newest revision"),
            Probe("GET", "/v1/prefs", query: [("atRevision", "0")], expect: 410, code: "compacted", "before the change log"),

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
            Probe(
                "POST", "/v1/prefs:batch", body: #"{"operations": [{"op": "set", "key": "batch.one", "value": null}]}"#,
                expect: 400, code: "invalid_value", "a set of null"),

            Probe("PUT", "/v1/locks/{key}", key: "lock.me", query: [("scope", "/team")], expect: 200, "lock"),
            Probe(
                "PUT", "/v1/locks/{key}", key: "lock.me", query: [("scope", "/elsewhere")], headers: [("If-Match", "5")], expect: 412,
                code: "stale_revision", "stale If-Match: nothing is there"),
            Probe(
                "DELETE", "/v1/locks/{key}", key: "lock.me", query: [("scope", "/team")], headers: [("If-Match", "0")], expect: 412,
                code: "stale_revision", "stale If-Match: locked there"),
            Probe("DELETE", "/v1/locks/{key}", key: "unlock.me", query: [("scope", "/")], expect: 200, "unlock"),
            Probe(
                "DELETE", "/v1/locks/{key}", key: "never.locked", expect: 200, "no lock there",
                check: { body in #expect((try? JSONDecoder().decode(WriteResult.self, from: body))?.removed == 0) }),

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
            Probe("GET", "/v1/dump", query: [("atRevision", "$revision")], expect: 200, "as it was at the newest revision"),
            Probe("GET", "/v1/dump", query: [("atRevision", "0")], expect: 410, code: "compacted", "before the change log"),

            Probe(
                "POST", "/v1/load",
                body: #"{"format": 1, "scope": "/x", "schemas": {}, "values": [{"key": "loaded.key", "scope": "/x/y", "value": true}], "locks": [{"key": "loaded.key", "scope": "/x"}]}"#,
                expect: 200, "load"),
            Probe(
                "POST", "/v1/load", query: [("replace", "1")],
                body: #"{"format": 1, "scope": "/x", "values": [{"key": "replaced.key", "scope": "/x/z", "value": 1}]}"#,
                expect: 200, "load replacing the subtree /x"),
            Probe(
                "POST", "/v1/load", body: #"{"format": 1, "values": [{"key": "locked.key", "scope": "/a/b", "value": 3}]}"#,
                expect: 409, code: "locked", "a value below a lock"),
            Probe("POST", "/v1/load", body: #"{"format": 2}"#, expect: 400, code: "invalid_request", "unknown format"),

            // Drafts.
            Probe(
                "GET", "/v1/drafts", query: [("account", "alice")], expect: 200, "alice's drafts",
                check: { body in
                    let ids = decode(DraftListAnswer.self, body)?.drafts.map(\.id.uuidString)
                    #expect(ids == [fixtures.main, fixtures.doomed], "by thread position")
                }),
            Probe("GET", "/v1/drafts", expect: 200, "every draft"),
            Probe(
                "GET", "/v1/drafts", query: [("account", "nobody"), ("thread", "no/such thread")], expect: 200,
                "filters no draft matches", check: { body in #expect(decode(DraftListAnswer.self, body)?.drafts.isEmpty == true) }),

            Probe(
                "POST", "/v1/drafts",
                body: #"{"account": "bob", "text": "Hi", "thread": "t2", "position": 0, "replyTo": "109", "contentWarning": "cw", "visibility": "unlisted", "language": "pt-BR", "sensitive": true, "poll": {"options": ["a", "b"], "expiresIn": 60, "multiple": false}}"#,
                expect: 201, "every field",
                check: { body in
                    let draft = decode(Draft.self, body)
                    #expect(draft?.revision == 1)
                    #expect(draft?.position == 0)
                    #expect(draft?.visibility == .unlisted)
                    #expect(draft?.poll?.options == ["a", "b"])
                }),
            Probe("POST", "/v1/drafts", body: #"{"account": "bob", "txt": "Hi"}"#, expect: 400, code: "invalid_request", "unknown field"),
            Probe("POST", "/v1/drafts", body: #"{"text": "Hi"}"#, expect: 400, code: "invalid_request", "no account"),
            Probe("POST", "/v1/drafts", body: #"{"account": "a/b"}"#, expect: 400, code: "invalid_request", "account not a scope segment"),
            Probe(
                "POST", "/v1/drafts", body: #"{"account": "bob", "thread": "t1"}"#, expect: 400, code: "invalid_request",
                "a thread of alice's"),
            Probe("POST", "/v1/drafts", body: #"{"account": "bob", "position": 0}"#, expect: 400, code: "invalid_request", "position without thread"),
            Probe(
                "POST", "/v1/drafts", body: #"{"account": "bob", "text": "\#(longText)"}"#, expect: 413, code: "too_large",
                "text over 100 000 characters"),

            Probe(
                "GET", "/v1/drafts/{draft}", params: ["draft": main], expect: 200, "with attachments",
                check: { body in #expect(decode(Draft.self, body)?.attachments.count == 2) }),
            Probe(
                "GET", "/v1/drafts/{draft}", params: ["draft": main.lowercased()], expect: 200, "id in lower case"),
            Probe("GET", "/v1/drafts/{draft}", params: ["draft": unknown], expect: 404, code: "not_found", "no such draft"),

            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], headers: [("If-Match", "\"$draftRevision\"")],
                body: #"{"text": "Edited", "contentWarning": null, "language": "en"}"#, expect: 200, "set and clear",
                check: { body in
                    let draft = decode(Draft.self, body)
                    #expect(draft?.text == "Edited")
                    #expect(draft?.contentWarning == nil)
                    #expect(draft?.language == "en")
                }),
            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], headers: [("If-Match", "1")], body: #"{"text": "x"}"#,
                expect: 412, code: "stale_revision", "stale If-Match"),
            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], body: #"{"txt": "x"}"#, expect: 400,
                code: "invalid_request", "unknown field"),
            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], body: #"{"thread": null, "position": 0}"#,
                expect: 400, code: "invalid_request", "position without thread"),
            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], body: #"{"visibility": "secret"}"#, expect: 400,
                code: "invalid_request", "unknown visibility"),
            Probe("PATCH", "/v1/drafts/{draft}", params: ["draft": unknown], body: "{}", expect: 404, code: "not_found", "no such draft"),
            Probe(
                "PATCH", "/v1/drafts/{draft}", params: ["draft": main], body: #"{"contentWarning": "\#(longText)"}"#,
                expect: 413, code: "too_large", "content warning over 100 000 characters"),

            Probe(
                "GET", "/v1/drafts/{draft}/validation", params: ["draft": main], expect: 200, "valid",
                check: { body in #expect(decode(DraftValidation.self, body)?.valid == true) }),
            Probe("GET", "/v1/drafts/{draft}/validation", params: ["draft": unknown], expect: 404, code: "not_found", "no such draft"),

            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main],
                query: [("filename", "cat.gif"), ("kind", "image"), ("alt", "A cat.")],
                headers: [("Content-Type", "image/gif"), ("If-Match", "$draftRevision")], body: gifBytes,
                expect: 201, "an image",
                check: { body in
                    let result = decode(AttachmentResult.self, body)
                    #expect(result?.attachment.mimeType == "image/gif")
                    #expect(result?.attachment.width == 2 && result?.attachment.height == 1)
                    #expect(result?.attachment.altText == "A cat.")
                    #expect(result?.attachment.position == 2)
                    #expect(result?.draft.attachments.count == 3)
                }),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main], query: [("filename", "../notes.txt")],
                headers: [("Content-Type", "application/octet-stream")], body: "", expect: 201, "empty, type from the name",
                check: { body in
                    let attachment = decode(AttachmentResult.self, body)?.attachment
                    #expect(attachment?.filename == "notes.txt")
                    #expect(attachment?.mimeType == "text/plain")
                    #expect(attachment?.kind == .file)
                    #expect(attachment?.byteSize == 0)
                }),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main], query: [("filename", "cat.png")],
                headers: [("Content-Type", "image/png")], body: "png bytes", expect: 400, code: "invalid_request",
                "bytes that are not the image type claimed"),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main], query: [("filename", "cat.gif"), ("kind", "video")],
                headers: [("Content-Type", "image/gif")], body: gifBytes, expect: 400, code: "invalid_request",
                "a kind that contradicts the type"),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main], query: [("filename", "big.bin")],
                headers: [("Content-Type", "application/octet-stream")], body: String(repeating: "x", count: 2000), expect: 413, code: "too_large", "over --max-attachment-bytes"),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": main], query: [("filename", "a.png")],
                headers: [("Content-Type", "text/plain"), ("If-Match", "1")], body: "x", expect: 412, code: "stale_revision", "stale If-Match"),
            Probe(
                "POST", "/v1/drafts/{draft}/attachments", params: ["draft": unknown], query: [("filename", "a.png")],
                headers: [("Content-Type", "image/png")], body: "x", expect: 404, code: "not_found", "no such draft"),

            Probe(
                "GET", "/v1/drafts/{draft}/attachments/{attachment}/data", params: ["draft": main, "attachment": fixtures.photo],
                expect: 200, "the bytes",
                check: { body in #expect(String(decoding: body, as: UTF8.self) == fixtures.photoBytes) }),
            Probe(
                "GET", "/v1/drafts/{draft}/attachments/{attachment}/data", params: ["draft": main, "attachment": unknown],
                expect: 404, code: "not_found", "no such attachment"),
            Probe(
                "GET", "/v1/drafts/{draft}/attachments/{attachment}/data", params: ["draft": fixtures.doomed, "attachment": fixtures.photo],
                expect: 404, code: "not_found", "another draft's attachment"),

            // Blobs: "hello" sent by its SHA-256, read back; refusals.
            Probe(
                "PATCH", "/v1/blobs/{sha256}", params: ["sha256": helloSHA256],
                headers: [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "0"), ("Upload-Length", "5")],
                body: "hello", expect: 204, "a whole blob"),
            Probe("HEAD", "/v1/blobs/{sha256}", params: ["sha256": helloSHA256], expect: 200, "held"),
            Probe(
                "GET", "/v1/blobs/{sha256}", params: ["sha256": helloSHA256], expect: 200, "read back",
                check: { body in #expect(String(decoding: body, as: UTF8.self) == "hello") }),
            Probe("HEAD", "/v1/blobs/{sha256}", params: ["sha256": unknownSHA256], expect: 404, "not held"),
            Probe("GET", "/v1/blobs/{sha256}", params: ["sha256": unknownSHA256], expect: 404, code: "not_found", "not held"),
            Probe(
                "PATCH", "/v1/blobs/{sha256}", params: ["sha256": unknownSHA256],
                headers: [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "3"), ("Upload-Length", "10")],
                body: "lo", expect: 409, code: "conflict", "from an offset not held"),
            Probe(
                "PATCH", "/v1/blobs/{sha256}", params: ["sha256": unknownSHA256],
                headers: [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "0"), ("Upload-Length", "2000")],
                body: "x", expect: 413, code: "too_large", "over --max-attachment-bytes"),
            Probe(
                "PATCH", "/v1/blobs/{sha256}", params: ["sha256": unknownSHA256],
                headers: [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "0"), ("Upload-Length", "5")],
                body: "hellx", expect: 422, code: "digest_mismatch", "bytes that are not the name's"),

            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                headers: [("If-Match", "$draftRevision")], body: #"{"altText": "A photo.", "position": 1}"#, expect: 200,
                "alt text and position",
                check: { body in
                    let result = decode(AttachmentResult.self, body)
                    #expect(result?.attachment.position == 1)
                    #expect(result?.attachment.altText == "A photo.")
                    #expect(result?.draft.attachments[1].id.uuidString == fixtures.photo)
                }),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                body: #"{"altText": null}"#, expect: 200, "clear the alt text",
                check: { body in #expect(decode(AttachmentResult.self, body)?.attachment.altText == nil) }),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                body: #"{"position": null}"#, expect: 400, code: "invalid_request", "null position"),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                body: #"{"position": 99}"#, expect: 400, code: "invalid_request", "position out of range"),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                body: #"{"alt": "x"}"#, expect: 400, code: "invalid_request", "unknown field"),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": unknown],
                body: "{}", expect: 404, code: "not_found", "no such attachment"),
            Probe(
                "PATCH", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                headers: [("If-Match", "1")], body: "{}", expect: 412, code: "stale_revision", "stale If-Match"),

            Probe(
                "DELETE", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.spare],
                headers: [("If-Match", "$draftRevision")], expect: 200, "remove",
                check: { body in
                    #expect(decode(Draft.self, body)?.attachments.contains { $0.id.uuidString == fixtures.spare } == false)
                }),
            Probe(
                "DELETE", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.spare],
                expect: 404, code: "not_found", "already removed"),
            Probe(
                "DELETE", "/v1/drafts/{draft}/attachments/{attachment}", params: ["draft": main, "attachment": fixtures.photo],
                headers: [("If-Match", "1")], expect: 412, code: "stale_revision", "stale If-Match"),

            Probe(
                "DELETE", "/v1/drafts/{draft}", params: ["draft": fixtures.doomed], headers: [("If-Match", "*")], expect: 200,
                "delete"),
            Probe("DELETE", "/v1/drafts/{draft}", params: ["draft": fixtures.doomed], expect: 404, code: "not_found", "already deleted"),
            Probe(
                "DELETE", "/v1/drafts/{draft}", params: ["draft": main], headers: [("If-Match", "\"1\"")], expect: 412,
                code: "stale_revision", "stale If-Match"),

            Probe(
                "GET", "/v1/threads/{thread}", params: ["thread": "t1"], expect: 200, "what is left of t1",
                check: { body in
                    let answer = decode(ThreadAnswer.self, body)
                    #expect(answer?.thread == "t1")
                    #expect(answer?.drafts.map(\.id.uuidString) == [fixtures.main])
                    #expect(answer?.drafts.first?.position == 0)
                }),
            Probe("GET", "/v1/threads/{thread}", params: ["thread": "no/such thread"], expect: 404, code: "not_found", "no such thread"),

            // The watch answers its head at once; `send` reads only the first bytes of a 200.
            Probe("GET", "/v1/watch", query: [("key", "filler.key"), ("since", "$revision")], expect: 200, "resume from now"),
            Probe("GET", "/v1/watch", expect: 200, "everything, live"),
            Probe("GET", "/v1/watch", headers: [("Last-Event-ID", "$revision")], expect: 200, "resume by Last-Event-ID"),
            Probe("GET", "/v1/watch", query: [("since", "0")], expect: 410, code: "compacted", "since before the change log"),
            Probe("GET", "/v1/watch", query: [("since", "999999")], expect: 400, code: "invalid_request", "since beyond the newest"),
            Probe("GET", "/v1/watch", query: [("draft", main), ("since", "$revision")], expect: 200, "a draft"),
            Probe("GET", "/v1/watch", query: [("thread", "t1"), ("account", "alice")], expect: 200, "a thread of an account"),
        ]
    }

    /// Sync's probes: a device's exchanges on the TCP listener with its named token (`laptop`, a
    /// writer at /accounts/alice; `phone`, a reader there), the conflicts they made, and a
    /// device daemon's sync (the replica, syncing as `phone`). Run after ``probes(_:)``.
    static func syncProbes(laptop: String, phone: String) -> [Probe] {
        let push = #"""
            {"cursor": 0, "mutations": [
              {"seq": 1, "key": "synced.key", "scope": "/accounts/alice", "value": 1, "base": 0, "stamp": "1795858491198.0@"},
              {"seq": 2, "key": "synced.key", "scope": "/accounts/bob", "value": 2, "base": 0, "stamp": "1795858491199.0@"}]}
            """#
        return [
            Probe(
                "POST", "/v1/sync", body: push, route: .bearer(laptop), expect: 200,
                "a device pushes: one change applied, one beyond its scope refused",
                check: { body in
                    let answer = try? WireJSON.decode(SyncAnswer.self, from: body)
                    #expect(answer?.device == "device-laptop")
                    #expect(answer?.results.map(\.outcome) == [.applied, .refused])
                    #expect(answer?.snapshot != nil, "a cursor of 0 gets a snapshot")
                }),
            Probe(
                "POST", "/v1/sync", body: push, route: .bearer(laptop), expect: 200, "the same changes again: duplicates",
                check: { body in
                    #expect((try? WireJSON.decode(SyncAnswer.self, from: body))?.results.map(\.outcome) == [.duplicate, .duplicate])
                }),
            Probe(
                "POST", "/v1/sync", body: #"{"cursor": $revision, "wait": 10}"#, route: .bearer(phone), expect: 200,
                "a reader pulls; nothing new, the long poll ends at its wait",
                check: { body in #expect((try? WireJSON.decode(SyncAnswer.self, from: body))?.changes.isEmpty == true) }),
            Probe(
                "POST", "/v1/sync", body: push, route: .bearer(phone), expect: 403, code: "forbidden", "a reader's device pushes"),
            Probe("POST", "/v1/sync", body: #"{"cursor": 0}"#, expect: 403, code: "forbidden", "no named token: the socket's owner"),
            Probe(
                "POST", "/v1/sync", body: #"{"cursor": 0, "since": 3}"#, route: .bearer(laptop), expect: 400,
                code: "invalid_request", "unknown field"),
            Probe(
                "POST", "/v1/sync",
                body: #"{"cursor": 0, "mutations": [{"seq": 3, "key": "synced.key", "scope": "/accounts/alice", "value": 1, "base": 0, "stamp": "1.0@", "when": 1}]}"#,
                route: .bearer(laptop), expect: 400, code: "invalid_request", "unknown field in a change"),
            Probe(
                "POST", "/v1/sync",
                body: #"{"cursor": 0, "mutations": [{"seq": 3, "key": "synced.key", "scope": "/accounts/alice", "value": null, "base": 0, "stamp": "1.0@"}]}"#,
                route: .bearer(laptop), expect: 400, code: "invalid_value", "a null value"),
            Probe(
                "POST", "/v1/sync",
                body: #"{"cursor": 0, "mutations": [{"seq": 4, "key": "synced.key", "scope": "/accounts/alice", "base": 0, "stamp": "1.0@"}, {"seq": 4, "key": "synced.key", "scope": "/accounts/alice", "base": 0, "stamp": "2.0@"}]}"#,
                route: .bearer(laptop), expect: 400, code: "invalid_request", "sequence numbers that do not increase"),
            Probe(
                "POST", "/v1/sync", body: #"{"cursor": 0, "wait": 600000}"#, route: .bearer(laptop), expect: 400,
                code: "invalid_request", "a wait beyond a minute"),

            Probe(
                "GET", "/v1/conflicts",
                query: [
                    ("scope", "/accounts"), ("key", "synced.key"), ("since", "0"), ("from", "2026-01-01T00:00:00Z"), ("limit", "5"),
                    ("order", "newest"),
                ], expect: 200, "the refused change, by every filter",
                check: { body in
                    let conflicts = (try? WireJSON.decode(ConflictList.self, from: body))?.conflicts
                    #expect(conflicts?.count == 1)
                    #expect(conflicts?.first?.rule == .refused)
                    #expect(conflicts?.first?.losers.first?.device == "device-laptop")
                }),
            Probe("GET", "/v1/conflicts", expect: 200, "every conflict"),
            // The refused change is the newest conflict, at the store's revision now.
            Probe(
                "POST", "/v1/conflicts/{revision}/restore", params: ["revision": "$revision"], query: [("loser", "3")],
                expect: 404, code: "not_found", "a loser the conflict does not have"),
            Probe(
                "POST", "/v1/conflicts/{revision}/restore", params: ["revision": "999999"], expect: 404, code: "not_found",
                "no conflict at that revision"),
            Probe(
                "POST", "/v1/conflicts/{revision}/restore", params: ["revision": "x"], expect: 400, code: "invalid_request",
                "a revision that is no number"),
            Probe(
                "POST", "/v1/conflicts/{revision}/restore", params: ["revision": "$revision"], expect: 200,
                "the refused change's value put back (at /accounts/bob, as the socket's owner)"),
            Probe(
                "GET", "/v1/conflicts", query: [("from", "yesterday")], expect: 400, code: "invalid_request", "from that is no time"),

            Probe("GET", "/v1/sync", route: .replica, expect: 200, "a device daemon's sync",
                check: { body in #expect(decode(SyncStatus.self, body)?.upstream.hasPrefix("http://127.0.0.1:") == true) }),
            Probe("GET", "/v1/sync", expect: 404, code: "not_found", "a daemon with no upstream"),
            Probe(
                "POST", "/v1/sync:now", query: [("timeout", "20")], route: .replica, expect: 200, "in step",
                check: { body in
                    let status = decode(SyncStatus.self, body)
                    #expect(status?.isInStep == true)
                    #expect(status?.device == "device-phone")
                }),
            Probe("POST", "/v1/sync:now", expect: 404, code: "not_found", "a daemon with no upstream"),
            Probe(
                "POST", "/v1/sync:now", query: [("timeout", "601")], route: .replica, expect: 400, code: "invalid_request",
                "a timeout beyond ten minutes"),
            Probe(
                "POST", "/v1/sync:stream",
                body: #"{"id": 1, "request": {"cursor": 0}}"# + "\n" + #"{"id": 2, "request": {"cursor": 0, "mutations": [{"seq": 9, "key": "synced.key", "scope": "/accounts/alice", "value": 3, "base": 0, "stamp": "1795858491299.0@"}]}}"# + "\n",
                route: .bearer(laptop), expect: 200, "a device's stream: two exchanges, answered by number, and the end",
                check: { body in
                    let frames = String(decoding: body, as: UTF8.self).split(separator: "\n").map {
                        try? WireJSON.decode(SyncStreamAnswer.self, from: Data($0.utf8))
                    }
                    #expect(Set(frames.map { $0?.id }) == [1, 2], "\(String(decoding: body, as: UTF8.self))")
                    #expect(frames.allSatisfy { $0?.answer != nil })
                }),
            Probe(
                "POST", "/v1/sync:stream", body: "not a frame\n", route: .bearer(laptop), expect: 200,
                "a frame that is not one: the stream's last frame says why",
                check: { body in
                    let last = try? WireJSON.decode(SyncStreamAnswer.self, from: body)
                    #expect(last?.id == nil && last?.error?.code == "invalid_json")
                }),
            Probe(
                "POST", "/v1/sync:stream", headers: [("Content-Encoding", "gzip")], body: "", route: .bearer(laptop), expect: 400,
                code: "invalid_request", "frames in a coding it does not take"),
            Probe(
                "POST", "/v1/sync:stream", body: "", expect: 403, code: "forbidden", "no named token: the socket's owner"),
        ]
    }

    /// How the contract test shows that the server checks a parameter: a value it must refuse
    /// with 400 and a code, or nothing for free text, which the server takes as it is.
    enum ParameterProbe {
        case refused(value: String, code: String)
        case freeText
    }

    /// nil for a parameter this test does not know yet.
    static func parameterProbe(for parameter: OpenAPIDocument.Parameter) -> ParameterProbe? {
        switch (parameter.location, parameter.name) {
        case ("path", "key"), ("query", "key"): .refused(value: "Bad", code: "invalid_key")
        case ("path", "draft"), ("path", "attachment"), ("query", "draft"): .refused(value: "not-a-uuid", code: "invalid_request")
        case ("query", "scope"): .refused(value: "nope", code: "invalid_scope")
        case ("query", "explain"), ("query", "recursive"), ("query", "replace"): .refused(value: "maybe", code: "invalid_request")
        case ("query", "since"), ("query", "minRevision"), ("query", "atRevision"), ("query", "before"), ("query", "limit"),
            ("query", "from"), ("query", "to"), ("query", "until"):
            .refused(value: "-4", code: "invalid_request")
        case ("query", "order"): .refused(value: "sideways", code: "invalid_request")
        case ("query", "timeout"): .refused(value: "-4", code: "invalid_request")
        case ("query", "format"): .refused(value: "xml", code: "invalid_request")
        case ("header", "Prefs-Reason"): .refused(value: "%FF", code: "invalid_request")
        case ("query", "filename"): .refused(value: "", code: "invalid_request")
        case ("query", "kind"): .refused(value: "picture", code: "invalid_request")
        case ("header", "Last-Event-ID"): .refused(value: "x", code: "invalid_request")
        case ("header", "If-Match"): .refused(value: "W/\"1\"", code: "invalid_request")
        case ("header", "Idempotency-Key"): .refused(value: "with space", code: "invalid_request")
        case ("path", "name"): .refused(value: "-bad", code: "invalid_request")
        case ("path", "sha256"): .refused(value: "ABC", code: "invalid_request")
        case ("header", "Upload-Offset"), ("header", "Upload-Length"): .refused(value: "-1", code: "invalid_request")
        case ("path", "revision"): .refused(value: "x", code: "invalid_request")
        case ("query", "loser"): .refused(value: "-1", code: "invalid_request")
        case ("header", "Content-Encoding"): .refused(value: "gzip", code: "invalid_request")
        case ("header", "If-None-Match"), ("path", "file"), ("header", "Accept-Encoding"): .freeText
        case ("query", "prefix"), ("query", "account"), ("query", "thread"), ("query", "alt"), ("path", "thread"), ("query", "author"),
            ("header", "User-Agent"):
            .freeText
        default: nil
        }
    }

    /// The malformed variants of `base`, one per checked input of `operation`.
    static func malformed(from base: Probe, operation: OpenAPIDocument.Operation, document: OpenAPIDocument) -> [Probe] {
        var probes: [Probe] = []
        let ofrep = operation.path.hasPrefix("/ofrep/")
        for reference in operation.parameterRefs {
            guard let parameter = document.parameters[reference] else { continue }
            // No text is a bad flag key: one no flag has is 404 FLAG_NOT_FOUND, probed below.
            if ofrep && parameter.location == "path" { continue }
            let (location, name) = (parameter.location, parameter.name)
            switch parameterProbe(for: parameter) {
            case nil:
                Issue.record("\(operation.name): no malformed value known for \(location) parameter '\(name)'; add one to parameterProbe")
            case .freeText:
                continue
            case .refused(let value, let code):
                var probe = base.malformed("bad \(location) parameter \(name) '\(value)'", code: code)
                switch location {
                case "path":
                    probe.pathParameters[name] = value
                case "query":
                    probe = probe.setting(name, to: value)
                case "header":
                    probe.headers.removeAll { $0.0 == name }
                    probe.headers.append((name, value))
                    if name == "Last-Event-ID" { probe.query.removeAll { $0.0 == "since" } }  // `since` wins over the header
                default:
                    Issue.record("\(operation.name): a parameter in \(location)")
                    continue
                }
                probes.append(probe)
            }
        }
        if operation.requestMediaTypes.contains("application/json") {
            var probe = base.malformed("body that is not JSON", code: ofrep ? "PARSE_ERROR" : "invalid_json")
            probe.body = "{bad json"
            probes.append(probe)
        }
        return probes
    }

    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// The current revision of the draft in `probe`'s path, when one of its headers asks for it.
    static func draftRevision(for probe: Probe, socket: String) async throws -> Int64? {
        guard probe.headers.contains(where: { $0.1.contains("$draftRevision") }),
            let draft = probe.pathParameters["draft"], UUID(uuidString: draft) != nil
        else { return nil }
        let response = try await UnixSocketTransport(socketPath: socket).send(
            HTTPRequestSpec(method: "GET", target: "/v1/drafts/\(draft)"))
        return decode(Draft.self, response.body)?.revision
    }

    /// Sends one probe on its own connection: a body with a JSON `Content-Type`, unless the probe
    /// gives its own. A watch answered 200 is an open stream: only its first bytes are read, then
    /// the connection is dropped.
    static func send(
        _ probe: Probe, socket given: String, routes: Routes? = nil, revision: Revision, draftRevision: Int64? = nil
    ) async throws -> Answer {
        let spec = HTTPRequestSpec(
            method: probe.method, target: probe.target(revision: revision),
            body: probe.body.map { Data($0.replacingOccurrences(of: "$revision", with: String(revision)).utf8) },
            headers: probe.resolvedHeaders(revision: revision, draftRevision: draftRevision))
        let isWatch = probe.path == "/v1/watch"
        let socket: String
        switch probe.route {
        case .socket:
            socket = given
        case .replica:
            socket = try #require(routes).replicaSocket
        case .bearer(let token):
            let port = try #require(routes).port
            return try await withContractTimeout(seconds: 20, "\(probe.method) \(spec.target) on TCP") {
                var headers = spec.headers
                if spec.body != nil { headers.append(("Content-Type", "application/json")) }
                let answer = try await TCPConnection(port: port).request(
                    probe.method, spec.target, token: token, data: spec.body, headers: headers)
                return Answer(status: answer.status, body: Data(answer.body.utf8))
            }
        }
        return try await withContractTimeout(seconds: 20, "\(probe.method) \(spec.target)") {
            let transport = UnixSocketTransport(socketPath: socket)
            if let body = spec.body, probe.headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                // A body of its own type (an upload): sent as it is, without the JSON framing
                // `send(_:)` gives a body.
                let bytes = AsyncThrowingStream<Data, any Error> { $0.yield(body); $0.finish() }
                let response = try await transport.send(spec, body: bytes, length: Int64(body.count))
                return Answer(status: response.status, body: response.body)
            }
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
/// whether they take a body and its media types, status codes, each answer's media types,
/// headers and JSON schema), component parameters, and component schemas (type object or not,
/// closed or not, required fields, properties and the schemas they refer to, enums).
///
/// This is a small hand-written line reader, not a YAML parser — the package takes no YAML
/// dependency for one test. It works because the document is written in a regular, predictable
/// layout (described at its top): two-space indentation, one key per line, quoted status codes
/// directly under `responses:` with their `headers:` and `content:` right under them, media
/// types right under `content:`, operation parameters only as `- $ref`, flow-style `required:`
/// lists, enums as block lists, and a property's `$ref` either directly under it or on the line
/// after `items:`, `additionalProperties:` or `oneOf:`. Block scalars (`key: |`) are skipped
/// whole. A line in `paths` that does not fit that layout is reported in ``problems`` rather
/// than skipped, so a change of layout fails the test instead of silently hiding an operation.
struct OpenAPIDocument {
    struct Operation {
        var method: String
        var path: String
        var statuses: Set<Int> = []
        var parameterRefs: [String] = []
        var hasBody = false
        /// The media types of the request body (`application/json`, `*/*`).
        var requestMediaTypes: Set<String> = []
        /// Status → the media types of its answer.
        var mediaTypes: [Int: Set<String>] = [:]
        /// Status → the headers its answer documents.
        var headers: [Int: Set<String>] = [:]
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
        /// The schema's own `enum:` list (a string schema such as `Visibility`).
        var values: [String] = []
    }

    private(set) var operations: [Operation] = []
    private(set) var parameters: [String: Parameter] = [:]
    private(set) var schemas: [String: Schema] = [:]
    private(set) var problems: [String] = []

    private static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]

    init(text: String) {
        enum Zone { case none, parameters, requestBody, responses, other }
        var section = ""
        var subsection = ""
        var path: String?
        var zone = Zone.none
        var status: Int?
        /// The part of a response being read: `headers`, `content`, `description`, …
        var responsePart = ""
        var inJSON = false
        var component: String?
        var inProperties = false
        var property: String?
        var inEnum = false
        var inSchemaEnum = false
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
                        zone = .requestBody
                        operations[operations.count - 1].hasBody = true
                    default: zone = .other
                    }
                    status = nil
                } else if zone == .requestBody, indent == 10 {
                    guard value.isEmpty, Self.unquoted(key).contains("/") else {
                        problems.append("line \(lineNumber): expected a media type under content")
                        continue
                    }
                    operations[operations.count - 1].requestMediaTypes.insert(Self.unquoted(key))
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
                    responsePart = ""
                    inJSON = false
                } else if zone == .responses, indent > 8, let status {
                    if indent == 10 {
                        responsePart = key
                        inJSON = false
                    } else if indent == 12, responsePart == "headers" {
                        operations[operations.count - 1].headers[status, default: []].insert(key)
                    } else if indent == 12, responsePart == "content" {
                        let type = Self.unquoted(key)
                        guard value.isEmpty, type.contains("/") else {
                            problems.append("line \(lineNumber): expected a media type under content")
                            continue
                        }
                        operations[operations.count - 1].mediaTypes[status, default: []].insert(type)
                        inJSON = type == "application/json"
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
                        inSchemaEnum = key == "enum" && value.isEmpty
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
                    } else if inSchemaEnum, indent == 8, text.hasPrefix("- ") {
                        schemas[component]?.values.append(String(text.dropFirst(2)))
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
                                default: .direct  // directly, or under `oneOf:`
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

    /// `"*/*"` → `*/*`: a key written in quotes.
    private static func unquoted(_ key: String) -> String {
        key.count >= 2 && key.hasPrefix("\"") && key.hasSuffix("\"") ? String(key.dropFirst().dropLast()) : key
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
