import Foundation
import Observation
import PrefsClient
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// Wrappers over a daemon outlive it: they say following is interrupted while it is away, and
/// catch up — missing nothing — once it answers again.
@Suite struct WrapperResumeTests {
    @Test(arguments: [false, true])
    func wrappersCatchUpAfterTheDaemonRestarts(crash: Bool) async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "before"))
        try await withPrefs(client, scope: "/accounts/alice") {
            nonisolated(unsafe) let model = TimelineModel()
            let observed = DraftObserving(draft.id)
            try await observed.projectedValue.loaded()
            let modes = ChangeCounter { _ = model.mode }

            if crash { await daemon.kill() } else { await daemon.expectCleanStop() }
            // While it is away, nothing is lost: the changes below happen before it answers again.
            let offline = try EmbeddedStore(path: daemon.databasePath)
            try await offline.set(\.statusMode, .expanded, scope: "/accounts")
            var patch = DraftPatch()
            patch.text = .set("after")
            _ = try await offline.updateDraft(draft.id, patch, ifRevision: nil)
            await offline.close()
            try await daemon.start()

            #expect(await modes.changes(atLeast: 1) == 1)
            #expect(model.mode == .expanded)
            #expect(model.$mode.source == .scope("/accounts"))
            try await waitUntil("the draft wrapper has the text written while it was away") {
                observed.wrappedValue?.draft.text == "after"
            }
            #expect(observed.projectedValue.error == nil)
        }
    }
}
