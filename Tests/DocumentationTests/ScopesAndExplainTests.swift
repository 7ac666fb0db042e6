import PrefsEngine
import PrefsKit
import PrefsStore
import Testing

/// The code of "Scopes, Locks and Explain" (`ScopesAndExplain.md`), in the article's order, on
/// the keys "Getting Started" declares.
@Suite(.timeLimit(.minutes(5))) struct ScopesAndExplainTests {
    @Test func theArticleRunsAsItSays() async throws {
        let prefs: any PrefsService = try EmbeddedStore.temporary()

        try await prefs.register(keys: [\.fontSize])
        try await prefs.set(\.fontSize, 16, scope: "/accounts/alice")
        let explained = try await prefs.resolve(\.fontSize, scope: "/accounts/alice/threads/42", explain: true)
        let layers = (explained.chain ?? []).map { "\($0.layer) \($0.value?.description ?? "-")" }
        // scope:/accounts/alice/threads/42 -
        // scope:/accounts/alice/threads -
        // scope:/accounts/alice 16         ← explained.source
        // scope:/accounts -
        // scope:/ -
        // default 14
        #expect(
            layers == [
                "scope:/accounts/alice/threads/42 -", "scope:/accounts/alice/threads -", "scope:/accounts/alice 16",
                "scope:/accounts -", "scope:/ -", "default 14",
            ])
        #expect(explained.source == .scope("/accounts/alice"))

        try await prefs.set(\.fontSize, 20, scope: "/accounts")
        try await prefs.lock("timeline.fontSize", scope: "/accounts")
        let locked = try await prefs.resolve(\.fontSize, scope: "/accounts/alice")   // 20, lock:/accounts
        var refusal: PrefsError?
        do {
            try await prefs.set(\.fontSize, 12, scope: "/accounts/alice")
        } catch let error as PrefsError where error.code == .locked {
            refusal = error                                      // names the lock: /accounts
        }
        try await prefs.unlock("timeline.fontSize", scope: "/accounts")
        #expect(locked.value == 20)
        #expect(locked.source == .lock("/accounts"))
        #expect(refusal?.message.contains("locked at /accounts") == true)
        #expect(try await prefs.resolve(\.fontSize, scope: "/accounts/alice").value == 16)

        let inner = try await withPrefs(prefs, scope: "/accounts/alice") {
            try await withPrefs(scope: "threads/42") {            // /accounts/alice/threads/42
                try await withPrefs(\.fontSize, 30) {             // for the code inside only
                    let context = try PrefsContext.required
                    return (context.scope, context[\.fontSize], context.value(of: TypedKey(\.fontSize)).source)
                }
            }
        }
        // inner == ("/accounts/alice/threads/42", 30, .local)
        #expect(inner == (ScopePath("/accounts/alice/threads/42"), 30, PreferenceSource.local))
        await #expect(throws: PrefsError.self) {
            try await withPrefs(prefs, scope: "/accounts/alice") {
                try await withPrefs(scope: "/accounts/bob") {}
            }
        }

        let before = try await prefs.resolve(\.fontSize, scope: "/accounts/alice")
        try await prefs.set(\.fontSize, 22, scope: "/accounts")            // hidden by alice's own value
        try await prefs.reset("timeline.fontSize", scope: "/accounts/alice", recursive: false)
        let scoped = WatchRequest(keys: ["timeline.fontSize"], scope: "/accounts/alice", since: before.revision)
        var seen: [ChangeEvent] = []
        for try await event in prefs.watch(scoped) where !event.kind.isNotice {
            seen.append(event)                                   // only the reset: now 22, from scope:/accounts
            break
        }
        #expect(seen.map(\.kind) == [.reset])
        #expect(seen.first?.value == 22)
        #expect(seen.first?.source == .scope("/accounts"))
        await (prefs as? EmbeddedStore)?.close()
    }
}
