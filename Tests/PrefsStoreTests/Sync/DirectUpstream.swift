import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization

/// A transport that hands a replica's requests — its exchanges and its attachments' bytes —
/// straight to an upstream engine in the same process, as a device whose token is `grant`;
/// `online` false makes every exchange fail as if the network were down; `tampers` true turns
/// the last byte of every download. It counts the bytes each way.
final class DirectUpstream: SyncTransport, BlobTransport {
    let upstream: EmbeddedStore
    let grant: AccessGrant
    let online = Mutex(true)
    let tampers = Mutex(false)
    /// The attachments' bytes sent up and fetched down so far.
    let blobBytes = Mutex((up: Int64(0), down: Int64(0)))

    init(_ upstream: EmbeddedStore, device: String, scope: ScopePath = "/accounts/alice") {
        self.upstream = upstream
        grant = AccessGrant(token: device, role: .writer, scope: scope)
    }

    func exchange(_ request: SyncRequest) async throws -> SyncAnswer {
        guard online.withLock({ $0 }) else { throw PrefsError(.unreachable, "The upstream cannot be reached (offline).") }
        return try await upstream.exchange(request, grant: grant, context: WriteContext())
    }

    func heldOffset(of sha256: String) async throws -> BlobState {
        guard online.withLock({ $0 }) else { throw PrefsError(.unreachable, "The upstream cannot be reached (offline).") }
        return try await upstream.blobState(sha256, grant: grant)
    }

    func upload(
        sha256: String, byteSize: Int64, bytes: @escaping @Sendable (_ offset: Int64) async throws -> AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64 {
        let offset: Int64 = if case .uploading(let received) = try await heldOffset(of: sha256) { received } else { 0 }
        blobBytes.withLock { $0.up += byteSize - offset }
        return try await upstream.uploadBlob(sha256, offset: offset, length: byteSize, grant: grant, bytes: try await bytes(offset))
    }

    func download(sha256: String) async throws -> AsyncThrowingStream<Data, any Error> {
        guard online.withLock({ $0 }) else { throw PrefsError(.unreachable, "The upstream cannot be reached (offline).") }
        let blob = try await upstream.blobData(sha256, grant: grant)
        blobBytes.withLock { $0.down += blob.byteSize }
        guard tampers.withLock({ $0 }) else { return blob.bytes }
        var whole = Data()
        for try await chunk in blob.bytes { whole.append(chunk) }
        if let last = whole.indices.last { whole[last] ^= 0xFF }
        let (bytes, pieces) = AsyncThrowingStream<Data, any Error>.makeStream()
        pieces.yield(whole.prefix(whole.count / 2))
        pieces.yield(whole.dropFirst(whole.count / 2))
        pieces.finish()
        return bytes
    }
}

/// An upstream and replicas of it, each a store in one temporary folder, for tests of sync's
/// rules through the engine's API.
final class SyncBench {
    let folder: URL
    let upstream: EmbeddedStore
    private(set) var replicas: [String: (store: EmbeddedStore, transport: DirectUpstream)] = [:]
    let time = SimulatedTime(1_800_000_000_000)

    /// A bench whose upstream keeps `upstreamRetains` changes in its log (the configuration's
    /// default if nil): a short log lets a test compact changes away.
    init(upstreamRetains: Int? = nil) async throws {
        folder = FileManager.default.temporaryDirectory.appending(path: "prefs-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        upstream = try Self.open(
            folder.appending(path: "upstream.sqlite").path, upstream: nil, clock: time.wallClock(skew: 0), retainChanges: upstreamRetains)
    }

    static func open(_ path: String, upstream: String?, clock: WallClock, retainChanges: Int? = nil) throws -> EmbeddedStore {
        var configuration = StoreConfiguration.forTests()
        configuration.durability = .normal
        configuration.upstream = upstream
        if let retainChanges { configuration.retainChanges = retainChanges }
        return try EmbeddedStore(
            storage: SQLiteStorage(path: path, durability: .normal), configuration: configuration, wallClock: clock)
    }

    /// A replica named `device`, with a writer token at `scope`, its clock `skew` ms off.
    @discardableResult
    func replica(_ device: String, scope: ScopePath = "/accounts/alice", skew: Int64 = 0) async throws -> EmbeddedStore {
        if upstream.token(named: device) == nil {
            _ = try await upstream.createToken(named: device, role: .writer, scope: scope)
        }
        let store = try Self.open(
            folder.appending(path: "\(device).sqlite").path, upstream: "direct://upstream", clock: time.wallClock(skew: skew))
        replicas[device] = (store, DirectUpstream(upstream, device: device, scope: scope))
        return store
    }

    /// Closes `device`'s replica, as a killed process would leave it, and opens it again.
    @discardableResult
    func restart(_ device: String) async throws -> EmbeddedStore {
        let (store, _) = replicas[device]!
        await store.close()
        let scope = replicas[device]!.transport.grant.scope
        return try await replica(device, scope: scope)
    }

    /// Exchanges until `device` is in step with the upstream.
    @discardableResult
    func sync(_ device: String) async throws -> SyncStatus {
        let (store, transport) = replicas[device]!
        for _ in 0..<10 {
            await store.exchange(through: transport, pushing: true, wait: nil)
            if let status = store.replicaStatus, status.isInStep, status.upstreamRevision == upstream.committedRevision {
                return status
            }
        }
        throw PrefsError(.internal, "\(device) is not in step: \(String(describing: store.replicaStatus))")
    }

    /// Syncs every replica, twice round, so that each has what the others pushed.
    func syncAll() async throws {
        for _ in 0..<2 {
            for device in replicas.keys.sorted() { try await sync(device) }
        }
    }

    func close() async {
        for (store, _) in replicas.values { await store.close() }
        await upstream.close()
        try? FileManager.default.removeItem(at: folder)
    }
}
