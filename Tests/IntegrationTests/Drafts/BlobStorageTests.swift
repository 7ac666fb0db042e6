import Foundation
import Logging
import PrefsEngine
import PrefsKit
import PrefsPostgres
import PrefsStore
import Synchronization
import TestHarness
import Testing

/// Blobs sent by their hash, kept by the engine on SQLite and on PostgreSQL alike: an upload's
/// bytes kept between requests per uploader, refused at another offset, hashed when all are in;
/// who may read a stored blob; and what the upkeep drops — uploads left alone, blobs uploaded
/// long ago that no attachment uses — and what it keeps.
@Suite struct BlobStorageTests {
    enum Backend: String, CaseIterable, Sendable {
        case sqlite, postgres
    }

    /// The backends this run has: PostgreSQL where a test server is configured.
    static let backends = Backend.allCases.filter { $0 == .sqlite || PostgresTestDatabase.isEnabled }

    /// Runs `body` with an engine on `backend`, made with `configuration`, telling the time by
    /// `wallClock`.
    static func withEngine(
        _ backend: Backend, configuration: StoreConfiguration = StoreConfiguration(), wallClock: WallClock = .system,
        _ body: (any EngineServing) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-blob-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let storage = try SQLiteStorage(path: folder.appending(path: "prefs.sqlite").path, durability: configuration.durability)
            try await withStore(try EmbeddedStore(storage: storage, configuration: configuration, wallClock: wallClock)) { try await body($0) }
        case .postgres:
            try await withPostgresDatabase { database in
                let store = try await PostgresStore(
                    database: PostgresLocation(url: database.url), configuration: configuration, logger: Logger(label: "prefsd"),
                    clock: ContinuousClock(), wallClock: wallClock)
                try await withStore(store) { try await body($0) }
            }
        }
    }

    /// Runs `body` with an engine on `backend` that keeps uploads and unused blobs an hour
    /// (``StoreConfiguration/blobUploadRetention``), telling the time of day by a clock that
    /// `body` moves on by hand (`pass(seconds)`), past the retention.
    static func withEngineKeepingBlobsAnHour(
        _ backend: Backend, _ body: (any EngineServing, _ pass: (Double) -> Void) async throws -> Void
    ) async throws {
        var configuration = StoreConfiguration()
        configuration.blobUploadRetention = .seconds(3600)
        let now = Mutex(1_800_000_000.0)
        try await withEngine(backend, configuration: configuration, wallClock: WallClock { now.withLock { $0 } }) { engine in
            try await body(engine) { seconds in now.withLock { $0 += seconds } }
        }
    }

    /// `count` bytes that repeat nowhere near a chunk's length.
    static func bytes(_ count: Int, seed: Int = 0) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 131 &+ $0 / 509) })
    }

    /// `data`'s SHA-256, as `sha256sum` gives it.
    static func sha256(_ data: Data) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appending(path: "blob-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return String(try await CommandResult.runTool("/usr/bin/sha256sum", [file.path]).stdout.prefix(64))
    }

    /// `data` as a body, in pieces of `piece` bytes.
    static func body(_ data: Data, piece: Int = 100_000) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            var start = data.startIndex
            while start < data.endIndex {
                continuation.yield(data[start..<min(start + piece, data.endIndex)])
                start += piece
            }
            continuation.finish()
        }
    }

    /// The whole of a blob's bytes as `grant` reads them.
    static func read(_ engine: any EngineServing, _ sha256: String, grant: AccessGrant) async throws -> Data {
        var bytes = Data()
        for try await chunk in try await engine.blobData(sha256, grant: grant).bytes { bytes.append(chunk) }
        return bytes
    }

    static let phone = AccessGrant(token: "alice-phone", role: .writer, scope: "/accounts/alice")
    static let laptop = AccessGrant(token: "alice-laptop", role: .writer, scope: "/accounts/alice")
    static let bob = AccessGrant(token: "bob", role: .reader, scope: "/accounts/bob")

    @Test("Each uploader's bytes are kept between requests, and hashed when all are in", arguments: backends)
    func uploadsGoOnFromTheBytesHeld(backend: Backend) async throws {
        try await Self.withEngine(backend) { engine in
            let blob = Self.bytes(700_000)
            let sha256 = try await Self.sha256(blob)
            let length = Int64(blob.count)
            #expect(try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.phone, bytes: Self.body(blob.prefix(300_001))) == 300_001)
            #expect(try await engine.blobState(sha256, grant: Self.phone) == .uploading(received: 300_001))
            #expect(try await engine.blobState(sha256, grant: Self.laptop) == .uploading(received: 0), "each uploader has its own")

            await #expect(throws: BlobOffsetConflict.self, "another offset") {
                try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.phone, bytes: Self.body(blob))
            }
            #expect(try await engine.blobState(sha256, grant: Self.phone) == .uploading(received: 300_001), "nothing changed")

            #expect(
                try await engine.uploadBlob(sha256, offset: 300_001, length: length, grant: Self.phone, bytes: Self.body(blob.dropFirst(300_001), piece: 77_777))
                    == length)
            #expect(try await engine.blobState(sha256, grant: Self.phone) == .held(byteSize: length))
            #expect(try await Self.read(engine, sha256, grant: Self.phone) == blob)
            #expect(try await engine.blobState(sha256, grant: Self.laptop) == .uploading(received: 0), "not the laptop's, and no draft uses it")
            await #expect(throws: PrefsError.self) { _ = try await engine.blobData(sha256, grant: Self.bob) }

            // The laptop proves it has the bytes by sending them; its upload then leaves the blob as it was.
            #expect(try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.laptop, bytes: Self.body(blob)) == length)
            #expect(try await Self.read(engine, sha256, grant: Self.laptop) == blob)

            // Bytes that hash to another name are dropped, the upload with them.
            let other = Self.bytes(1000, seed: 5)
            do {
                _ = try await engine.uploadBlob(sha256, offset: 0, length: 1000, grant: Self.bob, bytes: Self.body(other))
                Issue.record("bytes that hash to another name were taken")
            } catch let error as PrefsError {
                #expect(error.code == .digestMismatch, "\(error)")
            }
            #expect(try await engine.blobState(sha256, grant: Self.bob) == .uploading(received: 0))
        }
    }

    @Test("An upload begun before a restart is hashed from the bytes held once all are in")
    func anUploadGoesOnAcrossARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-blob-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        let blob = Self.bytes(600_000)
        let sha256 = try await Self.sha256(blob)
        try await withStore(try EmbeddedStore(path: path)) { store async throws in
            #expect(try await store.uploadBlob(sha256, offset: 0, length: 600_000, grant: Self.phone, bytes: Self.body(blob.prefix(400_000))) == 400_000)
        }
        // A new process has no hash of the first bytes: it reads them back.
        try await withStore(try EmbeddedStore(path: path)) { store async throws in
            #expect(try await store.uploadBlob(sha256, offset: 400_000, length: 600_000, grant: Self.phone, bytes: Self.body(blob.dropFirst(400_000))) == 600_000)
            #expect(try await Self.read(store, sha256, grant: Self.phone) == blob)
        }
        // Bytes held from before a restart that do not hash to the name are dropped all the same.
        let other = Self.bytes(600_000, seed: 9)
        try await withStore(try EmbeddedStore(path: path)) { store async throws in
            _ = try await store.uploadBlob(sha256, offset: 0, length: 600_000, grant: Self.laptop, bytes: Self.body(other.prefix(1000)))
        }
        try await withStore(try EmbeddedStore(path: path)) { store async throws in
            await #expect { try await store.uploadBlob(sha256, offset: 1000, length: 600_000, grant: Self.laptop, bytes: Self.body(other.dropFirst(1000))) } throws: {
                ($0 as? PrefsError)?.code == .digestMismatch
            }
            #expect(try await store.blobState(sha256, grant: Self.laptop) == .uploading(received: 0))
        }
    }

    @Test("A blob is read by the accounts whose drafts use it", arguments: backends)
    func draftsOfAnAccountOpenItsBlobs(backend: Backend) async throws {
        try await Self.withEngine(backend) { engine in
            let blob = Self.bytes(2000, seed: 1)
            let sha256 = try await Self.sha256(blob)
            let reader = AccessGrant(token: "alice-web", role: .reader, scope: "/accounts/alice")
            let accounts = AccessGrant(token: "ops", role: .reader, scope: "/accounts")
            #expect(try await engine.uploadBlob(sha256, offset: 0, length: 2000, grant: Self.phone, bytes: Self.body(blob)) == 2000)
            #expect(try await engine.blobState(sha256, grant: reader) == .uploading(received: 0))
            let draft = try await engine.createDraft(DraftInput(account: "alice"), context: WriteContext())
            _ = try await engine.addAttachment(
                to: draft.id, AttachmentUpload(filename: "a.bin"), ifRevision: nil, bytes: Self.body(blob), context: WriteContext())
            #expect(try await engine.blobState(sha256, grant: reader) == .held(byteSize: 2000))
            #expect(try await engine.blobState(sha256, grant: accounts) == .held(byteSize: 2000))
            #expect(try await engine.blobState(sha256, grant: Self.bob) == .uploading(received: 0))
            #expect(try await engine.blobState(sha256, grant: .everything) == .held(byteSize: 2000))
        }
    }

    @Test("A blob keeps the bytes of the upload it came by, which its uploader cannot replace", arguments: backends)
    func aBlobKeepsTheBytesOfItsUpload(backend: Backend) async throws {
        try await Self.withEngineKeepingBlobsAnHour(backend) { engine, pass in
            let blob = Self.bytes(600_000, seed: 7)
            let (sha256, length) = (try await Self.sha256(blob), Int64(blob.count))
            #expect(try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.phone, bytes: Self.body(blob)) == length)
            // The laptop sends the same bytes later; past the phone's retention, only the laptop keeps the blob.
            pass(1800)
            #expect(try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.laptop, bytes: Self.body(blob)) == length)
            pass(1801)
            _ = try await engine.set(try KeyName("a.b"), to: 1, scope: "/", ifRevision: nil, context: WriteContext())
            #expect(try await Self.read(engine, sha256, grant: Self.laptop) == blob, "the phone's upload still holds the bytes")
            await #expect(throws: PrefsError.self, "no longer the phone's to read") { _ = try await engine.blobData(sha256, grant: Self.phone) }

            // The phone's upload is whole: it cannot start over, and ends with no more bytes.
            #expect(try await engine.blobState(sha256, grant: Self.phone) == .uploading(received: length))
            await #expect(throws: BlobOffsetConflict.self) {
                try await engine.uploadBlob(sha256, offset: 0, length: length, grant: Self.phone, bytes: Self.body(blob))
            }
            #expect(try await engine.uploadBlob(sha256, offset: length, length: length, grant: Self.phone, bytes: Self.body(Data())) == length)
            #expect(try await Self.read(engine, sha256, grant: Self.phone) == blob)

            // Past every uploader's retention, with no attachment, the blob goes, and its bytes with it.
            pass(3601)
            _ = try await engine.set(try KeyName("a.b"), to: 2, scope: "/", ifRevision: nil, context: WriteContext())
            #expect(try await engine.blobState(sha256, grant: .everything) == .uploading(received: 0))
            #expect(try await engine.blobState(sha256, grant: Self.phone) == .uploading(received: 0), "its upload went with it")
        }
    }

    @Test("Uploads left alone, and blobs uploaded long ago that no attachment uses, are dropped", arguments: backends)
    func upkeepDropsWhatOutlivedItsRetention(backend: Backend) async throws {
        try await Self.withEngineKeepingBlobsAnHour(backend) { engine, pass in
            let (unused, used, partial) = (Self.bytes(1000, seed: 1), Self.bytes(1000, seed: 2), Self.bytes(1000, seed: 3))
            let sums = (try await Self.sha256(unused), try await Self.sha256(used), try await Self.sha256(partial))
            _ = try await engine.uploadBlob(sums.0, offset: 0, length: 1000, grant: Self.phone, bytes: Self.body(unused))
            _ = try await engine.uploadBlob(sums.1, offset: 0, length: 1000, grant: Self.phone, bytes: Self.body(used))
            _ = try await engine.uploadBlob(sums.2, offset: 0, length: 1000, grant: Self.phone, bytes: Self.body(partial.prefix(10)))
            let draft = try await engine.createDraft(DraftInput(account: "alice"), context: WriteContext())
            let added = try await engine.addAttachment(
                to: draft.id, AttachmentUpload(filename: "a.bin"), ifRevision: nil, bytes: Self.body(used), context: WriteContext())
            pass(3601)
            // The upkeep runs as a batch commits.
            _ = try await engine.set(try KeyName("a.b"), to: 1, scope: "/", ifRevision: nil, context: WriteContext())
            #expect(try await engine.blobState(sums.0, grant: .everything) == .uploading(received: 0), "no attachment uses it")
            #expect(try await engine.blobState(sums.1, grant: .everything) == .held(byteSize: 1000), "an attachment uses it")
            #expect(try await Self.read(engine, sums.1, grant: .everything) == used, "the upload holding its bytes is no upload left alone")
            #expect(try await engine.blobState(sums.2, grant: Self.phone) == .uploading(received: 0), "left alone")

            // A blob uploaded again is kept a while longer, though its last attachment goes.
            _ = try await engine.uploadBlob(sums.1, offset: 0, length: 1000, grant: Self.phone, bytes: Self.body(Data()))
            _ = try await engine.removeAttachment(added.attachment.id, of: draft.id, ifRevision: nil, context: WriteContext())
            #expect(try await engine.blobState(sums.1, grant: .everything) == .held(byteSize: 1000), "its uploader keeps it")
            pass(3601)
            _ = try await engine.set(try KeyName("a.b"), to: 2, scope: "/", ifRevision: nil, context: WriteContext())
            #expect(try await engine.blobState(sums.1, grant: .everything) == .uploading(received: 0), "and then it goes")
        }
    }
}
