import Foundation
import PrefsClient
import PrefsKit
import PrefsStore
import PrefsSync
import TestHarness
import Testing

/// Blobs sent to the real daemon through `PrefsClient`, by their SHA-256: through a proxy on a
/// Unix socket that cuts the upload midway (the bytes that got through are kept, the upload goes
/// on from them, and the blob comes back whole), and 50 MiB of them with the daemon's memory
/// staying flat.
@Suite struct BlobUploadTests {
    /// A file of `count` bytes that repeat nowhere near a chunk's length, and its SHA-256.
    static func file(_ count: Int, in folder: URL) async throws -> (url: URL, sha256: String) {
        let url = folder.appending(path: "blob.bin")
        try Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 / 509) }).write(to: url)
        let sum = try await CommandResult.runTool("/usr/bin/sha256sum", [url.path])
        return (url, String(sum.stdout.prefix(64)))
    }

    /// What the client sends of an upload's first try before its body: a `HEAD` and a
    /// `PATCH`'s head, as `PrefsClient` writes them.
    static func headBytes(_ sha256: String) -> Int {
        let userAgent = PrefsClient.defaultUserAgent
        let head = "HEAD /v1/blobs/\(sha256) HTTP/1.1\r\nHost: prefsd\r\n\r\n"
        let patch =
            "PATCH /v1/blobs/\(sha256) HTTP/1.1\r\nHost: prefsd\r\nContent-Type: application/offset+octet-stream\r\n"
            + "Upload-Offset: 0\r\nUpload-Length: 3000000\r\nUser-Agent: \(userAgent)\r\nContent-Length: 3000000\r\n\r\n"
        return head.utf8.count + patch.utf8.count
    }

    /// A client of the daemon through `socket`, which tries a lost upload again for `patience`.
    static func client(through socket: String, patience: Duration) -> PrefsClient {
        PrefsClient(transport: UnixSocketTransport(socketPath: socket), writeRetryDeadline: patience)
    }

    @Test func anUploadCutMidwayGoesOnFromTheBytesTheDaemonKept() async throws {
        let daemon = try await Daemon()
        let (file, sha256) = try await Self.file(3_000_000, in: daemon.folder)
        let proxySocket = daemon.folder.appending(path: "proxy.sock").path
        let proxy = try FaultProxy(socketPath: proxySocket, to: daemon.socketPath)
        defer { proxy.close() }

        // Cut after a megabyte: a client that does not try again fails, and the daemon holds
        // what got through — once it has taken in what was on its way (the heads went first).
        proxy.cutNextRequest(after: 1_000_000)
        let impatient = Self.client(through: proxySocket, patience: .zero)
        await #expect(throws: PrefsError.self) { try await impatient.uploadBlob(sha256: sha256, file: file) }
        try await waitUntil("the daemon holds the bytes before the cut") {
            try await daemon.client.blobOffset(sha256: sha256) == .uploading(received: Int64(1_000_000 - Self.headBytes(sha256)))
        }

        // Cut again, later: the client goes on by itself from what the daemon holds each time.
        proxy.cutNextRequest(after: 1_200_000)
        let client = Self.client(through: proxySocket, patience: .seconds(30))
        #expect(try await client.uploadBlob(sha256: sha256, file: file) == 3_000_000)
        #expect(try await client.blobOffset(sha256: sha256) == .held(byteSize: 3_000_000))

        let copy = daemon.folder.appending(path: "copy.bin")
        #expect(try await client.downloadBlob(sha256: sha256, to: copy) == 3_000_000)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: file), "the blob comes back as it went")
        let rows = try await CommandResult.runTool(
            "/usr/bin/sqlite3",
            [daemon.databasePath, "SELECT (SELECT count(*) FROM blob_upload), (SELECT count(*) FROM blob_chunk), (SELECT count(*) FROM blob WHERE uploader IS NOT NULL)"])
        #expect(rows.output == "1|0|1", "the finished upload's chunks are the blob's bytes, copied nowhere")

        // Sent again, it is answered at once.
        #expect(try await client.uploadBlob(sha256: sha256, file: file) == 3_000_000)
    }

    @Test func aReplicasTransportSendsABlobToItsUpstreamThroughACut() async throws {
        let (daemon, port) = try await TCPListenerTests.daemon(token: "blob-t0ken")
        let alice = try await daemon.client.createToken(named: "alice-phone", role: .writer, scope: "/accounts/alice").secret
        let (file, sha256) = try await Self.file(2_000_000, in: daemon.folder)
        let proxy = try FaultProxy(to: port)
        defer { proxy.close() }
        let upstream = try HTTPUpstream(url: "http://127.0.0.1:\(proxy.port)", token: alice)
        try await withCleanup { () async throws -> Void in
            #expect(try await upstream.heldOffset(of: sha256) == .uploading(received: 0))
            proxy.cutNextRequest(after: 700_000)
            let bytes: @Sendable (Int64) async throws -> AsyncThrowingStream<Data, any Error> = { offset in
                try FileUpload(path: file.path, from: offset).bytes()
            }
            #expect(try await upstream.upload(sha256: sha256, byteSize: 2_000_000, bytes: bytes) == 2_000_000)
            #expect(try await upstream.heldOffset(of: sha256) == .held(byteSize: 2_000_000))
            var copy = Data()
            for try await chunk in try await upstream.download(sha256: sha256) { copy.append(chunk) }
            #expect(try copy == Data(contentsOf: file))
            let unknown = String(repeating: "0", count: 64)
            await #expect(throws: PrefsError.self) { _ = try await upstream.download(sha256: unknown) }
        } cleanup: {
            await upstream.shutdown()
        }
    }

    @Test(.timeLimit(.minutes(3))) func fiftyMebibytesUpAndDownWithFlatMemory() async throws {
        let daemon = try await Daemon()
        let pid = try #require(daemon.process?.processIdentifier)
        let client = daemon.client
        // Warm up the transfer paths with a small blob, so the baseline includes what any upload needs.
        let (small, smallSHA256) = try await Self.file(1024 * 1024, in: daemon.folder)
        try await client.uploadBlob(sha256: smallSHA256, file: small)
        try await client.downloadBlob(sha256: smallSHA256, to: daemon.folder.appending(path: "small.copy"))
        let before = try LargeAttachmentTests.peakResidentBytes(of: pid)

        let large = daemon.folder.appending(path: "large.bin")
        try LargeAttachmentTests.writeLargeFile(large.path, size: LargeAttachmentTests.size)
        let sha256 = try await DraftsCLITests.sha256(large.path)
        #expect(try await client.uploadBlob(sha256: sha256, file: large) == Int64(LargeAttachmentTests.size))
        let copy = daemon.folder.appending(path: "large.copy")
        #expect(try await client.downloadBlob(sha256: sha256, to: copy) == Int64(LargeAttachmentTests.size))
        let after = try LargeAttachmentTests.peakResidentBytes(of: pid)

        #expect(try await DraftsCLITests.sha256(copy.path) == sha256)
        let rise = after - before
        #expect(rise < 16 * 1024 * 1024, "prefsd's peak resident memory rose by \(rise / 1024) KiB for a 50 MiB blob")
    }

    @Test func aFileThatIsNotItsNameIsRefusedAndNothingIsKept() async throws {
        let daemon = try await Daemon()
        let (file, _) = try await Self.file(300_000, in: daemon.folder)
        let named = String(repeating: "0", count: 64)
        await #expect(throws: PrefsError.self) {
            do {
                try await daemon.client.uploadBlob(sha256: named, file: file)
            } catch let error as PrefsError {
                #expect(error.code == .digestMismatch, "\(error)")
                throw error
            }
        }
        #expect(try await daemon.client.blobOffset(sha256: named) == .uploading(received: 0))
        await #expect(throws: PrefsError.self) {
            try await daemon.client.downloadBlob(sha256: named, to: daemon.folder.appending(path: "none.bin"))
        }
        await #expect(throws: PrefsError.self) { try await daemon.client.blobOffset(sha256: "not-a-hash") }
    }
}
