import Foundation
import PrefsKit

/// Attachments' bytes between a replica and its upstream, beside its exchanges
/// (``BlobTransport``): the bytes a pushed draft references go up before the change, each blob
/// once — not at all if the upstream holds it — and the bytes of the drafts an answer brings come
/// down before it is taken in.
extension PrefsEngine {
    /// Sends the upstream the bytes of the attachments `drafts` add — those their bases do not
    /// have — that it does not hold yet, each once, from the offset it holds (an upload cut off
    /// goes on there).
    func uploadAttachments(of drafts: [DraftMutation], through blobs: any BlobTransport) async throws {
        guard let replica else { return }
        var seen: Set<String> = []
        for mutation in drafts {
            guard let draft = mutation.draft else { continue }
            let known = Set(replica.draftBase(of: mutation.id)?.draft?.attachments.map(\.sha256) ?? [])
            for attachment in draft.attachments where !known.contains(attachment.sha256) && seen.insert(attachment.sha256).inserted {
                if case .held = try await blobs.heldOffset(of: attachment.sha256) { continue }
                // Bytes this replica does not hold: the upstream refuses the change, kept as a loser.
                guard let file = try await stage(blob: attachment.sha256) else { continue }
                defer { try? FileManager.default.removeItem(at: file) }
                _ = try await blobs.upload(sha256: attachment.sha256, file: file)
            }
        }
    }

    /// Fetches from the upstream the bytes of the attachments of the drafts `answer` brings that
    /// this replica does not hold, each into a file beside the database; returns them by hash, for
    /// the answer's transaction to store.
    func downloadAttachments(of answer: SyncAnswer, through blobs: any BlobTransport) async throws -> [String: (file: URL, byteSize: Int64)] {
        var drafts = (answer.draftResults ?? []).flatMap { [$0.draft, $0.copy] }.compactMap { $0 }
        drafts += (answer.drafts ?? []).compactMap(\.draft) + (answer.snapshot?.drafts ?? [])
        var fetched: [String: (file: URL, byteSize: Int64)] = [:]
        do {
            for attachment in drafts.flatMap(\.attachments) where fetched[attachment.sha256] == nil {
                guard try await storage.blobSize(sha256: attachment.sha256) == nil else { continue }
                let file = try stagingFile()
                fetched[attachment.sha256] = (file, try await blobs.download(sha256: attachment.sha256, to: file))
            }
        } catch {
            for (file, _) in fetched.values { try? FileManager.default.removeItem(at: file) }
            throw error
        }
        return fetched
    }

    /// The stored blob `sha256` written to a file beside the database; nil if it is not stored.
    private func stage(blob sha256: String) async throws -> URL? {
        guard let reader = try await storage.openBlob(sha256) else { return nil }
        let download = BlobDownload(reader)
        let file = try stagingFile()
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            while let chunk = try await download.next() { try handle.write(contentsOf: chunk) }
            return file
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }

    /// A new empty file in the storage's staging folder.
    private func stagingFile() throws -> URL {
        let folder = storage.stagingFolder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appending(path: UUID().uuidString)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw PrefsError(.storageFull, "Cannot create a file in \(folder.path).")
        }
        return file
    }
}
