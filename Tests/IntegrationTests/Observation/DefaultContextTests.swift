import Foundation
import PrefsClient
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// Wrappers outside every `withPrefs`: they use the process-wide default context, and where
/// there is none they report it instead of stopping the program. These tests set and remove the
/// one default of the test process, so they run one at a time; no other test depends on it
/// (wrappers elsewhere are made inside `withPrefs`, whose context wins over the default).
@MainActor @Suite(.serialized, .timeLimit(.minutes(5))) struct DefaultContextTests {
    @Test func withoutAnyContextWrappersReportHowToGiveThemOne() async throws {
        PrefsContext.removeDefault()
        let model = ScreenModel(draftID: UUID(), threadID: "t")
        #expect(model.mode == .collapsed && model.$mode.source == .none)
        #expect(model.fontSize == 14 && model.$fontSize.error == PrefsContext.missingError)
        #expect(model.draft == nil && model.thread.isEmpty)
        for error in [model.$mode.error, model.$draft.error, model.$thread.error] {
            #expect(error == PrefsContext.missingError)
        }
        let message = PrefsContext.missingError.message
        #expect(message.contains("withPrefs(service, scope:)") && message.contains("PrefsContext.setDefault(service, scope:)"))
        await #expect(throws: PrefsContext.missingError) { try await model.$mode.set(.expanded) }
        await #expect(throws: PrefsContext.missingError) { try await model.$draft.loaded(timeout: .seconds(30)) }
        await #expect(throws: PrefsContext.missingError) { try await model.$thread.loaded() }
        model.fontSize = 20  // a local value needs no context
        #expect(model.fontSize == 20 && model.$fontSize.source == .local)
        #expect(model.scope == .root)
        await #expect(throws: PrefsContext.missingError) { try await ScopeOrLocalService().prefs.status() }

        #expect(PrefsContext.current == nil)
        #expect(throws: PrefsContext.missingError) { try PrefsContext.required }
        await #expect(throws: PrefsContext.missingError) { try await withPrefs(scope: "threads/1") {} }
        await #expect(throws: PrefsContext.missingError) { try await withPrefs(\.statusMode, .expanded) {} }
    }

    @Test(arguments: Backend.allCases)
    func wrappersOutsideEveryContextUseTheDefault(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.set(\.statusMode, .expanded, scope: "/accounts/alice")
            let draft = try await service.createDraft(DraftInput(account: "alice", text: "hi", thread: "t"))
            try await PrefsContext.setDefault(service, scope: "/accounts/alice")
            defer { PrefsContext.removeDefault() }
            #expect(PrefsContext.default?.scope == "/accounts/alice" && PrefsContext.current?.scope == "/accounts/alice")

            let model = ScreenModel(draftID: draft.id, threadID: "t")
            try await model.$draft.loaded(timeout: .seconds(30))
            #expect(model.mode == .expanded && model.$mode.source == .scope("/accounts/alice") && model.$mode.error == nil)
            #expect(model.draft?.draft.text == "hi" && model.scope == "/accounts/alice")
            var modes = model.$mode.updates.makeAsyncIterator()
            #expect(await modes.next() == .expanded)
            try await model.$mode.set(.collapsed)
            #expect(await modes.next() == .collapsed)
            #expect(try await service.resolve(\.statusMode, scope: "/accounts/alice").value == .collapsed)

            // withPrefs narrows the default, or wins over it.
            let narrowed = try await withPrefs(scope: "threads/t") { try PrefsContext.required.scope }
            #expect(narrowed == "/accounts/alice/threads/t")
            let local = try await withPrefs(\.statusMode, .expanded) { ScreenModel(draftID: draft.id, threadID: "t").mode }
            #expect(local == .expanded)
            let elsewhere = try await withPrefs(service, scope: "/accounts/bob") { try PrefsContext.required.scope }
            #expect(elsewhere == "/accounts/bob")

            // A default that cannot be loaded leaves the one before in place.
            let nowhere = PrefsClient(socketPath: "/tmp/prefsd-nowhere-\(UUID().uuidString.prefix(8)).sock")
            await #expect(throws: PrefsError.self) { try await PrefsContext.setDefault(nowhere) }
            #expect(PrefsContext.default?.scope == "/accounts/alice")
        }
        #expect(PrefsContext.default == nil)
    }
}

/// A holder of the context's service, read where it is used.
private struct ScopeOrLocalService {
    @ScopeOrLocal(\.service) var prefs: any PrefsService
}
