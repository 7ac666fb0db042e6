import Crypto
import Foundation
import HTTPTypes
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness
import Testing

@testable import PrefsServer

/// Blobs named by their SHA-256 through the API as every listener asks it: `HEAD`, `PATCH` from
/// the offset held and `GET`, the hash checked; an upload cut off midway and resumed; refusals
/// that change nothing (a wrong offset, a body over the limit, bytes that hash to another name);
/// and who may read a blob by its hash.
@Suite struct BlobEndpointsTests {
    /// An answer's status, header fields and body (a streamed one read whole).
    struct Answered {
        var status: Int
        var fields: [HTTPField]
        var body: Data
        /// The error code the body carries, if it is an error.
        var code: String? { (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error.code }
        /// The `Upload-Offset` field, as a number.
        var uploadOffset: Int64? { fields.first { $0.name == BlobEndpoints.uploadOffset }.flatMap { Int64($0.value) } }
        /// The text of the body, for messages.
        var text: String { String(decoding: body.prefix(500), as: UTF8.self) }
    }

    /// `method target` asked of `api` as a listener does, its body (if any) streamed from
    /// `body`, and the answer read whole.
    static func ask(
        _ api: API, _ method: HTTPRequest.Method, _ target: String, fields: [HTTPField] = [], bearer: String? = nil,
        body: AsyncThrowingStream<Data, any Error>? = nil
    ) async throws -> Answered {
        var fields = fields
        if let bearer { fields.append(HTTPField(name: .authorization, value: "Bearer \(bearer)")) }
        var request = EndpointRequest(method: method, target: target, headers: RequestHeaders(fields))
        let delivery: Delivery
        switch api.prepare(&request) {
        case .answer(let answer):
            delivery = .answer(answer)
        case .endpoint(let endpoint):
            request.bodyStream = body
            delivery = api.deliver(request, to: endpoint)
        }
        let answer: Answer
        switch delivery {
        case .answer(let now): answer = now
        case .pending(let start): answer = await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
        case .events(let feed):
            feed.end()
            throw PrefsError(.internal, "a blob's endpoint answered with events")
        }
        var bytes = Data()
        switch answer.body {
        case .whole(let buffer): bytes = Data(buffer.readableBytesView)
        case .streamed(_, let chunks) where method != .head: for try await chunk in chunks { bytes.append(chunk) }
        case .streamed, .events: break
        }
        var answered = Answered(status: Int(answer.status.code), fields: answer.fields, body: bytes)
        if let length = answer.body.length { answered.fields.append(HTTPField(name: .contentLength, value: String(length))) }
        return answered
    }

    /// A `PATCH` of `bytes` from `offset`, of a blob `length` bytes long, sent in pieces of
    /// `piece` bytes; with `cutAfter`, the connection is cut once that many bytes have gone.
    static func patch(
        _ api: API, _ sha256: String, _ bytes: Data, offset: Int64, length: Int64, bearer: String? = nil, piece: Int = 100_000,
        cutAfter: Int? = nil
    ) async throws -> Answered {
        let fields = [
            HTTPField(name: BlobEndpoints.uploadOffset, value: String(offset)),
            HTTPField(name: BlobEndpoints.uploadLength, value: String(length)),
        ]
        let body = AsyncThrowingStream<Data, any Error> { continuation in
            var sent = 0
            while sent < bytes.count {
                let end = min(sent + piece, cutAfter ?? bytes.count, bytes.count)
                guard end > sent else { break }
                continuation.yield(bytes[bytes.startIndex + sent..<bytes.startIndex + end])
                sent = end
            }
            if cutAfter != nil {
                continuation.finish(throwing: PrefsError(.invalidRequest, "The connection's input closed before the request's body ended."))
            } else {
                continuation.finish()
            }
        }
        return try await ask(api, .patch, "/v1/blobs/\(sha256)", fields: fields, bearer: bearer, body: body)
    }

    /// The API of `store` on its Unix socket (the owner), and on a TCP listener (bearer tokens).
    static func apis(_ store: EmbeddedStore) -> (socket: API, tcp: API) {
        let socket = API(
            engine: store, limits: ServerLimits(), metrics: PrefsMetrics.factory(), peers: ConnectionPeers(), logger: Logger(label: "test"))
        return (socket, socket.listening(with: .bearer(fileToken: nil, sessions: ConsoleSessions())))
    }

    /// `count` bytes that repeat nowhere near a chunk's length.
    static func bytes(_ count: Int, seed: UInt8 = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251 &+ Int(seed)) })
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    @Test func aBlobGoesUpInOnePatchAndComesBackWhole() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = Self.apis(store).socket
            let blob = Self.bytes(700_000)
            let sha256 = Self.sha256(blob)
            let before = try await Self.ask(api, .head, "/v1/blobs/\(sha256)")
            #expect(before.status == 404 && before.uploadOffset == 0, "\(before.text)")
            let missing = try await Self.ask(api, .get, "/v1/blobs/\(sha256)")
            #expect(missing.status == 404 && missing.code == "not_found", "\(missing.text)")

            let sent = try await Self.patch(api, sha256, blob, offset: 0, length: Int64(blob.count))
            #expect(sent.status == 204 && sent.uploadOffset == Int64(blob.count), "\(sent.text)")

            let held = try await Self.ask(api, .head, "/v1/blobs/\(sha256)")
            #expect(held.status == 200, "\(held.text)")
            #expect(held.fields[.contentLength] == String(blob.count))
            #expect(held.body.isEmpty)
            let read = try await Self.ask(api, .get, "/v1/blobs/\(sha256)")
            #expect(read.status == 200 && read.fields[.contentType] == "application/octet-stream")
            #expect(read.body == blob, "the bytes come back as they went")

            let again = try await Self.patch(api, sha256, blob, offset: 0, length: Int64(blob.count))
            #expect(again.status == 204 && again.uploadOffset == Int64(blob.count), "a blob held is answered at once: \(again.text)")
        }
    }

    @Test func anUploadCutOffGoesOnFromTheBytesHeld() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = Self.apis(store).socket
            let blob = Self.bytes(900_000)
            let (sha256, length) = (Self.sha256(blob), Int64(blob.count))
            // Cut after 300 001 bytes: a chunk and a bit (the bit, too, is kept).
            let cut = try await Self.patch(api, sha256, blob, offset: 0, length: length, cutAfter: 300_001)
            #expect(cut.status == 400, "the cut request's answer goes nowhere: \(cut.text)")
            let state = try await Self.ask(api, .head, "/v1/blobs/\(sha256)")
            #expect(state.status == 404 && state.uploadOffset == 300_001, "\(state.text)")

            let rest = try await Self.patch(api, sha256, blob.dropFirst(300_001), offset: 300_001, length: length, piece: 65_536)
            #expect(rest.status == 204 && rest.uploadOffset == length, "\(rest.text)")
            let read = try await Self.ask(api, .get, "/v1/blobs/\(sha256)")
            #expect(read.body == blob)
        }
    }

    @Test func aPatchFromAnotherOffsetIsRefusedAndChangesNothing() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = Self.apis(store).socket
            let blob = Self.bytes(500_000)
            let (sha256, length) = (Self.sha256(blob), Int64(blob.count))
            let part = try await Self.patch(api, sha256, blob.prefix(200_000), offset: 0, length: length)
            #expect(part.status == 204 && part.uploadOffset == 200_000, "a body that ends early: \(part.text)")
            for offset: Int64 in [0, 100_000, 300_000] {
                let wrong = try await Self.patch(api, sha256, blob.dropFirst(Int(offset)), offset: offset, length: length)
                #expect(wrong.status == 409 && wrong.code == "conflict", "\(offset): \(wrong.text)")
                #expect(wrong.uploadOffset == 200_000, "\(offset): it says where the upload stands")
            }
            let state = try await Self.ask(api, .head, "/v1/blobs/\(sha256)")
            #expect(state.uploadOffset == 200_000, "nothing changed")
            let rest = try await Self.patch(api, sha256, blob.dropFirst(200_000), offset: 200_000, length: length)
            #expect(rest.status == 204 && rest.uploadOffset == length, "\(rest.text)")
            #expect(try await Self.ask(api, .get, "/v1/blobs/\(sha256)").body == blob)
        }
    }

    @Test func bytesThatHashToAnotherNameAreDropped() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = Self.apis(store).socket
            let blob = Self.bytes(400_000)
            let named = Self.sha256(Self.bytes(400_000, seed: 9))
            let wrong = try await Self.patch(api, named, blob, offset: 0, length: Int64(blob.count))
            #expect(wrong.status == 422 && wrong.code == "digest_mismatch", "\(wrong.text)")
            #expect(wrong.text.contains(Self.sha256(blob)), "it says what the bytes hash to")
            let state = try await Self.ask(api, .head, "/v1/blobs/\(named)")
            #expect(state.status == 404 && state.uploadOffset == 0, "the upload was dropped: \(state.text)")
            #expect(try await Self.ask(api, .get, "/v1/blobs/\(named)").status == 404)
        }
    }

    @Test func aBlobOverTheAttachmentLimitIsRefusedBeforeItsBytes() async throws {
        var configuration = StoreConfiguration()
        configuration.maximumAttachmentBytes = 100_000
        try await withStore(try EmbeddedStore.temporary(configuration: configuration)) { store in
            let api = Self.apis(store).socket
            let blob = Self.bytes(100_001)
            let sha256 = Self.sha256(blob)
            let over = try await Self.patch(api, sha256, blob, offset: 0, length: Int64(blob.count))
            #expect(over.status == 413 && over.code == "too_large", "\(over.text)")
            let state = try await Self.ask(api, .head, "/v1/blobs/\(sha256)")
            #expect(state.uploadOffset == 0, "nothing was kept")
            let atLimit = Self.bytes(100_000)
            let within = try await Self.patch(api, Self.sha256(atLimit), atLimit, offset: 0, length: 100_000)
            #expect(within.status == 204 && within.uploadOffset == 100_000, "\(within.text)")
        }
    }

    @Test(
        "Bad names and counts are refused before anything is read",
        arguments: [
            ("/v1/blobs/ABC", ["Upload-Offset": "0", "Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "A", count: 64), ["Upload-Offset": "0", "Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "a", count: 65), ["Upload-Offset": "0", "Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Offset": "0"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Offset": "-1", "Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Offset": "0", "Upload-Length": "lots"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Offset": "2", "Upload-Length": "1"]),
            ("/v1/blobs/" + String(repeating: "a", count: 64), ["Upload-Offset": "0", "Upload-Length": "1", "Content-Length": "2"]),
        ])
    func badNamesAndCountsAreRefused(target: String, headers: [String: String]) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = Self.apis(store).socket
            let fields = headers.map { HTTPField(name: HTTPField.Name($0.key)!, value: $0.value) }
            let body = AsyncThrowingStream<Data, any Error> { $0.yield(Data("xy".utf8)); $0.finish() }
            let answered = try await Self.ask(api, .patch, target, fields: fields, body: body)
            #expect(answered.status == 400 && answered.code == "invalid_request", "\(target) \(headers): \(answered.text)")
            if target.hasSuffix("ABC") {
                let head = try await Self.ask(api, .head, target)
                #expect(head.status == 400, "\(head.text)")
            }
        }
    }

    @Test func aTokenBelowTheRootReadsOnlyItsOwnAccountsBlobsAndWhatItUploaded() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let tcp = Self.apis(store).tcp
            let alicesPhone = try await store.createToken(named: "alice-phone", role: .writer, scope: "/accounts/alice").secret
            let alicesReader = try await store.createToken(named: "alice-web", role: .reader, scope: "/accounts/alice").secret
            let bob = try await store.createToken(named: "bob-phone", role: .writer, scope: "/accounts/bob").secret
            let everyone = try await store.createToken(named: "ops", role: .reader, scope: "/").secret

            // Uploaded by alice's phone: readable by it, and by a reader at the root.
            let photo = Self.bytes(300_000)
            let sha256 = Self.sha256(photo)
            let sent = try await Self.patch(tcp, sha256, photo, offset: 0, length: Int64(photo.count), bearer: alicesPhone)
            #expect(sent.status == 204, "\(sent.text)")
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: alicesPhone).body == photo)
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: everyone).body == photo)
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: alicesReader).status == 404, "no draft of alice's uses it yet")

            // Once a draft of alice's has it, alice's other tokens read it; bob's never does.
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            let bytes = AsyncThrowingStream<Data, any Error> { $0.yield(photo); $0.finish() }
            _ = try await store.addAttachment(to: draft.id, AttachmentUpload(filename: "photo.bin"), ifRevision: nil, bytes: bytes)
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: alicesReader).body == photo)
            let bobReads = try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: bob)
            #expect(bobReads.status == 404 && bobReads.code == "not_found", "\(bobReads.text)")
            let bobAsks = try await Self.ask(tcp, .head, "/v1/blobs/\(sha256)", bearer: bob)
            #expect(bobAsks.status == 404 && bobAsks.uploadOffset == 0, "knowing the hash tells bob nothing: \(bobAsks.text)")

            // Bob may not have it for the asking: a PATCH of the held blob is an upload like any
            // other for him, whose bytes must hash to its name.
            let claim = try await Self.patch(tcp, sha256, Data(), offset: 0, length: Int64(photo.count), bearer: bob)
            #expect(claim.status == 204 && claim.uploadOffset == 0, "\(claim.text)")
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: bob).status == 404)
            let proof = try await Self.patch(tcp, sha256, photo, offset: 0, length: Int64(photo.count), bearer: bob)
            #expect(proof.status == 204 && proof.uploadOffset == Int64(photo.count), "\(proof.text)")
            #expect(try await Self.ask(tcp, .get, "/v1/blobs/\(sha256)", bearer: bob).body == photo, "he sent the bytes")

            // Sending needs a writer.
            let readerSends = try await Self.patch(tcp, sha256, photo, offset: 0, length: Int64(photo.count), bearer: alicesReader)
            #expect(readerSends.status == 403 && readerSends.code == "forbidden", "\(readerSends.text)")
            #expect(try await Self.ask(tcp, .head, "/v1/blobs/\(sha256)").status == 401)
        }
    }

    @Test func uploadsLeftAloneAndBlobsNoAttachmentUsesArePrunedAfterTheRetention() async throws {
        var configuration = StoreConfiguration()
        configuration.blobUploadRetention = .seconds(3600)
        // The time of day, moved by hand past the retention.
        let now = Mutex(1_800_000_000.0)
        try await withStore(try EmbeddedStore.temporary(configuration: configuration, wallClock: WallClock { now.withLock { $0 } })) { store in
            let api = Self.apis(store).socket
            let kept = Self.bytes(1000, seed: 1)
            let used = Self.bytes(1000, seed: 2)
            let partial = Self.bytes(1000, seed: 3)
            for blob in [kept, used] {
                #expect(try await Self.patch(api, Self.sha256(blob), blob, offset: 0, length: 1000).status == 204)
            }
            #expect(try await Self.patch(api, Self.sha256(partial), partial.prefix(10), offset: 0, length: 1000).uploadOffset == 10)
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            _ = try await store.addAttachment(
                to: draft.id, AttachmentUpload(filename: "a.bin"), ifRevision: nil,
                bytes: AsyncThrowingStream { $0.yield(used); $0.finish() })
            now.withLock { $0 += 3601 }
            // A write prunes what outlived the retention as it commits.
            try await store.set("a.b", to: 1)
            #expect(try await Self.ask(api, .head, "/v1/blobs/\(Self.sha256(kept))").status == 404, "no attachment uses it")
            #expect(try await Self.ask(api, .head, "/v1/blobs/\(Self.sha256(used))").status == 200, "an attachment uses it")
            #expect(try await Self.ask(api, .head, "/v1/blobs/\(Self.sha256(partial))").uploadOffset == 0, "left alone")
        }
    }
}

extension [HTTPField] {
    /// The value of the first field named `name`.
    fileprivate subscript(name: HTTPField.Name) -> String? {
        first { $0.name == name }?.value
    }
}
