import Foundation
import PrefsEngine
import PrefsKit
@testable import PrefsStore
import Testing

/// The WAL stays short while a writer commits batch after batch without a pause: the writer
/// checkpoints it between batches once it is long, instead of leaving it to a checkpoint that
/// would wait for the writes to pause.
@Suite("Store: checkpoints under a steady load", .timeLimit(.minutes(5)))
struct CheckpointTests {
    @Test func aWriterThatNeverPausesKeepsTheWALShort() throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        let storage = try SQLiteStorage(path: path, durability: .normal)
        defer { storage.close() }
        // Each row fills a page of its own: a batch of 20 writes about 20 frames, and 600 batches
        // about 12 000 — three times the frames past which the writer checkpoints.
        let value = JSONValue.string(String(repeating: "x", count: 3000))
        let batches = 600
        try storage.withWriter { connection in
            guard case .exclusive(let transactions) = connection.transactions else {
                Issue.record("SQLite's writer is the only one")
                return
            }
            for batch in 0..<batches {
                _ = try transactions.begin(after: Revision(batch * 20))
                for row in 1...20 {
                    try connection.upsertValue(key: "k.r\(row)", scope: .root, value: value, revision: Revision(batch * 20 + row))
                }
                try transactions.commit(newestRevision: Revision(batch * 20 + 20))
                connection.betweenBatches()
            }
        }
        let walBytes = try #require(FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        let frameBytes = 24 + 4096
        // The WAL restarted after each checkpoint: it never held much more than the frames that
        // trigger one (and a batch), where without them it would hold all 12 000.
        #expect(walBytes <= 32 + (SQLiteStorage.checkpointFrames + 100) * frameBytes, "\(walBytes / frameBytes) frames")
        #expect(try storage.loadSnapshot().keys.count == 20)
    }
}
