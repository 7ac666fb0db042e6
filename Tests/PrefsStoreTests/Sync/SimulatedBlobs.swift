import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore

/// A device's way to its upstream in a ``SyncSimulation`` for attachments' bytes — and, once
/// the network heals, for one last exchange — straight to the upstream engine, failing while the
/// device is cut off. It counts what crosses: each device's bytes sent up of each blob, and its
/// fetches of each blob, so that the simulation can tell that no bytes went twice.
final class SimulatedBlobs: SyncTransport, BlobTransport, @unchecked Sendable {
    // @unchecked: the simulation runs in one task, one step at a time; nothing here is shared
    // across tasks.
    let upstream: EmbeddedStore
    let grant: AccessGrant
    let device: SyncSimulation.Device
    let ledger: Ledger

    /// What crossed, for every device of one simulation.
    final class Ledger {
        /// The bytes of each blob each device sent up, by `device sha256`.
        var sent: [String: Int64] = [:]
        /// How many times each device fetched each blob, by `device sha256`.
        var fetched: [String: Int] = [:]
    }

    init(upstream: EmbeddedStore, device: SyncSimulation.Device, ledger: Ledger) {
        self.upstream = upstream
        self.device = device
        self.ledger = ledger
        grant = AccessGrant(token: device.name, role: .writer, scope: SyncSimulation.reach)
    }

    private func reach() throws {
        guard !device.partitioned else { throw PrefsError(.unreachable, "\(device.name) is cut off from the upstream.") }
    }

    func exchange(_ request: SyncRequest) async throws -> SyncAnswer {
        try reach()
        return try await upstream.exchange(request, grant: grant, context: WriteContext())
    }

    func heldOffset(of sha256: String) async throws -> BlobState {
        try reach()
        return try await upstream.blobState(sha256, grant: grant)
    }

    func upload(
        sha256: String, byteSize: Int64, bytes: @escaping @Sendable (_ offset: Int64) async throws -> AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64 {
        let offset: Int64 = if case .uploading(let received) = try await heldOffset(of: sha256) { received } else { 0 }
        ledger.sent["\(device.name) \(sha256)", default: 0] += byteSize - offset
        return try await upstream.uploadBlob(sha256, offset: offset, length: byteSize, grant: grant, bytes: try await bytes(offset))
    }

    func download(sha256: String) async throws -> AsyncThrowingStream<Data, any Error> {
        try reach()
        ledger.fetched["\(device.name) \(sha256)", default: 0] += 1
        return try await upstream.blobData(sha256, grant: grant).bytes
    }
}
