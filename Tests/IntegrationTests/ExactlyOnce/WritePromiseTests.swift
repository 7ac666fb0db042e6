import Crypto
import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// What a write promises, on every path a request can take (``HTTPPath``): one that changes
/// nothing makes no revision; numbers are kept exactly as written; a `null` value is refused the
/// same way everywhere; and a download that has begun delivers its bytes whole.
@Suite struct WritePromiseTests {
    /// The revision a write answered with.
    static func revision(of answer: HTTPAnswer?, sourceLocation: SourceLocation = #_sourceLocation) throws -> Revision {
        let answer = try #require(answer, sourceLocation: sourceLocation)
        #expect(answer.status == 200, "\(answer.text)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(WriteResult.self, from: answer.body).revision
    }

    static func put(_ target: String, _ body: String, headers: String = "") -> String {
        "PUT \(target) HTTP/1.1\r\nHost: prefsd\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// A `PUT` with a chunked body, which only the general HTTP/1 path takes.
    static func chunkedPut(_ target: String, _ body: String) -> String {
        "PUT \(target) HTTP/1.1\r\nHost: prefsd\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(body.utf8.count, radix: 16) + "\r\n\(body)\r\n0\r\n\r\n"
    }

    /// Values, and the same value written another way.
    static let sameValues = [
        ("true", "true"), ("42", "42"), ("-7", "-7.0"), ("2.5", "2.50"), (#""text""#, #""text""#),
        (#"[1,"a",{"z":null}]"#, #"[1, "a", {"z": null}]"#), (#"{"b":1,"a":[2]}"#, #"{ "a": [2], "b": 1 }"#),
    ]

    @Test("A PUT of the value already stored makes no revision", arguments: HTTPPath.allCases)
    func unchangedPutMakesNoRevision(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let client = daemon.daemon.client
        for (index, (value, again)) in Self.sameValues.enumerated() {
            let target = "/v1/prefs/same.k\(index)?scope=/accounts/x"
            let written = try Self.revision(of: try await daemon.exchange(Self.put(target, value), on: path))
            var requests = [Self.put(target, value), Self.put(target, again)]
            if path != .front { requests.append(Self.chunkedPut(target, again)) }
            for request in requests {
                #expect(try Self.revision(of: try await daemon.exchange(request, on: path)) == written, "\(request)")
            }
            #expect(try await client.status().revision == written, "\(value)")
        }
        let revision = try await client.status().revision
        let changes = try await CommandResult.runTool("/usr/bin/sqlite3", [daemon.daemon.databasePath, "SELECT count(*) FROM change"])
        #expect(changes.output == "\(revision)")
    }

    @Test("Batches, locks, unlocks, resets, schemas and loads that change nothing make no revision",
          arguments: [HTTPPath.general, .tcp])
    func otherUnchangedWritesMakeNoRevision(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let client = daemon.daemon.client
        try await client.register(schemas: ["same.int": PreferenceSchema(type: .int, maximum: 10)])
        try await client.set("same.key", to: ["a": 1], scope: "/accounts/x")
        try await client.set("same.int", to: 3)
        try await client.lock("same.key", scope: "/accounts/x")
        let revision = try await client.status().revision
        func send(_ method: String, _ target: String, _ body: String = "") async throws -> HTTPAnswer {
            let head = "\(method) \(target) HTTP/1.1\r\nHost: prefsd\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            return try #require(try await daemon.exchange(head + body, on: path), "\(method) \(target)")
        }

        let batch = try await send(
            "POST", "/v1/prefs:batch",
            #"{"operations":[{"op":"set","key":"same.key","scope":"/accounts/x","value":{"a":1}},"#
                + #"{"op":"reset","key":"never.set"},{"op":"set","key":"same.int","value":3}]}"#)
        #expect(batch.text == #"{"revision":\#(revision),"revisions":[\#(revision),\#(revision),\#(revision)]}"#)
        let mixed = try await send(
            "POST", "/v1/prefs:batch",
            #"{"operations":[{"op":"set","key":"same.int","value":3},{"op":"set","key":"same.int","value":4},"#
                + #"{"op":"set","key":"same.int","value":4}]}"#)
        #expect(mixed.text == #"{"revision":\#(revision + 1),"revisions":[\#(revision),\#(revision + 1),\#(revision + 1)]}"#)
        let current = revision + 1

        #expect(try await send("PUT", "/v1/locks/same.key?scope=/accounts/x").text == #"{"revision":\#(current)}"#)
        let unlock = try await send("DELETE", "/v1/locks/same.key?scope=/elsewhere")
        #expect(unlock.status == 200)
        #expect(unlock.text == #"{"removed":0,"revision":\#(current)}"#)
        #expect(try await send("DELETE", "/v1/prefs/never.set?scope=/a").text == #"{"removed":0,"revision":\#(current)}"#)
        #expect(try await send("PUT", "/v1/schema/same.int", #"{"max":10,"type":"int"}"#).text == #"{"revision":\#(current)}"#)

        let dump = try #require(try await daemon.exchange("GET /v1/dump HTTP/1.1\r\nHost: prefsd\r\n\r\n", on: path))
        #expect(try await send("POST", "/v1/load", dump.text).text == #"{"revision":\#(current)}"#)
        #expect(try await client.status().revision == current)

        // An unlock that removes a lock answers like a reset that removes a value.
        let removed = try await send("DELETE", "/v1/locks/same.key?scope=/accounts/x")
        #expect(removed.text == #"{"removed":1,"revision":\#(current + 1)}"#)
    }

    @Test("A batch set of null is refused as a PUT of null is", arguments: [HTTPPath.general, .tcp])
    func batchNullIsInvalidValue(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let put = try #require(try await daemon.exchange(Self.put("/v1/prefs/null.key", "null"), on: path))
        let body = #"{"operations":[{"op":"set","key":"null.key","value":null}]}"#
        let batch = try #require(
            try await daemon.exchange(
                "POST /v1/prefs:batch HTTP/1.1\r\nHost: prefsd\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)", on: path))
        #expect(put.status == 400)
        #expect(batch.status == 400)
        #expect(batch.errorCode == "invalid_value")
        #expect(batch.text == put.text)
        #expect(try await daemon.daemon.client.status().revision == 0)
    }

    /// Numbers no `Int64` or `Double` holds exactly, as they are written and read back.
    static let exactNumbers = [
        "12345678901234567890", "-98765432109876543210", "0.10000000000000000001", "123456789012345678901234567890.12345678",
        "18446744073709551616",
    ]

    @Test("Numbers are kept exactly as written, or refused", arguments: HTTPPath.allCases)
    func numbersAreKeptExactly(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let client = daemon.daemon.client
        for (index, number) in Self.exactNumbers.enumerated() {
            for (key, body, expected) in [
                ("exact.n\(index)", number, number), ("exact.o\(index)", #"{"n": \#(number)}"#, #"{"n":\#(number)}"#),
            ] {
                _ = try Self.revision(of: try await daemon.exchange(Self.put("/v1/prefs/\(key)", body), on: path))
                let read = try #require(try await daemon.exchange("GET /v1/prefs/\(key) HTTP/1.1\r\nHost: x\r\n\r\n", on: path))
                #expect(read.text.hasSuffix(#""value":\#(expected)}"#), "\(read.text)")
                #expect(try await client.resolve(key).value.canonicalText == expected)
            }
        }
        let revision = try await client.status().revision
        for number in ["1234567890123456789012345678901234567890123", "1e400", "1.5e-300000"] {
            let refused = try #require(try await daemon.exchange(Self.put("/v1/prefs/exact.refused", number), on: path))
            #expect(refused.status == 400, "\(number): \(refused.text)")
            #expect(refused.errorCode == "invalid_value", "\(number): \(refused.text)")
        }
        #expect(try await client.status().revision == revision)
    }

    @Test("Batches, loads and dumps keep numbers exactly", arguments: [HTTPPath.general, .tcp])
    func bodiesKeepNumbersExactly(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let numbers = Self.exactNumbers.joined(separator: ",")
        func post(_ target: String, _ body: String) async throws -> HTTPAnswer {
            try #require(
                try await daemon.exchange(
                    "POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)", on: path))
        }
        let batch = try await post("/v1/prefs:batch", #"{"operations":[{"op":"set","key":"exact.batch","value":[\#(numbers)]}]}"#)
        #expect(batch.status == 200, "\(batch.text)")
        let load = try await post(
            "/v1/load", #"{"format":1,"values":[{"key":"exact.load","scope":"/a","value":{"big":[\#(numbers)]}}]}"#)
        #expect(load.status == 200, "\(load.text)")
        let dump = try #require(try await daemon.exchange("GET /v1/dump HTTP/1.1\r\nHost: x\r\n\r\n", on: path))
        #expect(dump.text.contains(#""value":[\#(numbers)]"#), "\(dump.text)")
        #expect(dump.text.contains(#""value":{"big":[\#(numbers)]}"#), "\(dump.text)")
        // The dump loads back into a new daemon as it was.
        let other = try await Daemon()
        let file = other.folder.appending(path: "dump.json")
        try dump.body.write(to: file)
        #expect(try await other.prefsctl("load", file.path).status == 0)
        let again = try await other.raw("GET", "/v1/dump")
        #expect(again.body == dump.text)
        let schemaBody = #"{"exact.int":{"type":"int","max":20000000000000000000}}"#
        let schema = try #require(
            try await daemon.exchange(
                "PUT /v1/schema HTTP/1.1\r\nHost: x\r\nContent-Length: \(schemaBody.utf8.count)\r\n\r\n\(schemaBody)", on: path))
        #expect(schema.status == 200, "\(schema.text)")
        let within = try #require(try await daemon.exchange(Self.put("/v1/prefs/exact.int", "19999999999999999999"), on: path))
        #expect(within.status == 200, "\(within.text)")
        let beyond = try #require(try await daemon.exchange(Self.put("/v1/prefs/exact.int", "20000000000000000001"), on: path))
        #expect(beyond.errorCode == "invalid_value", "\(beyond.text)")
    }

    @Test("prefsctl keeps numbers exactly: set, get, dump and load")
    func prefsctlKeepsNumbersExactly() async throws {
        let daemon = try await Daemon()
        for number in Self.exactNumbers {
            let set = try await daemon.prefsctl("set", "exact.cli", "--", number)
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try await daemon.prefsctl("get", "exact.cli").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == number)
        }
        let file = daemon.folder.appending(path: "dump.json")
        try await daemon.prefsctl("dump").stdout.write(to: file, atomically: true, encoding: .utf8)
        let other = try await Daemon()
        #expect(try await other.prefsctl("load", file.path).status == 0)
        let resolved = try await other.client.resolve("exact.cli")
        #expect(resolved.value.canonicalText == Self.exactNumbers.last)
    }

    @Test("A download that has begun delivers its bytes whole when its draft is deleted or its attachment removed",
          arguments: [HTTPPath.general, .tcp])
    func downloadOutlivesItsAttachment(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let client = daemon.daemon.client
        // Far more than the socket buffers hold, so that most of it is still to send when the
        // attachment goes.
        let bytes = Data((0..<12_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        for removal in ["delete the draft", "remove the attachment"] {
            let draft = try await client.createDraft(DraftInput(account: "hold", text: removal))
            let upload = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(bytes)
                continuation.finish()
            }
            let attachment = try await client.addAttachment(
                to: draft.id, AttachmentUpload(filename: "big.bin", kind: .file), ifRevision: nil, bytes: upload
            ).attachment
            let connection = try await daemon.connect(path)
            connection.send(
                "GET /v1/drafts/\(draft.id.uuidString)/attachments/\(attachment.id.uuidString)/data HTTP/1.1\r\nHost: x\r\n\r\n")
            let begun = await connection.read(until: "\r\n\r\n")
            #expect(begun.hasPrefix("HTTP/1.1 200"), "\(begun.prefix(200))")
            if removal == "delete the draft" {
                _ = try await client.deleteDraft(draft.id, ifRevision: nil)
            } else {
                _ = try await client.removeAttachment(attachment.id, of: draft.id, ifRevision: nil)
            }
            let answer = try #require(await connection.response(), "\(removal)")
            #expect(answer.body.count == bytes.count, "\(removal)")
            #expect(answer.body == bytes, "\(removal)")
            // Once the download has ended, the bytes no attachment uses are freed.
            try await waitUntil("the bytes are freed (\(removal))") {
                try await CommandResult.runTool(
                    "/usr/bin/sqlite3", [daemon.daemon.databasePath, "SELECT count(*) FROM blob"]
                ).output == "0"
            }
        }
    }
}
