import PrefsEngine
import PrefsKit
import PrefsStore
import Testing

extension PreferenceValues {
    @Preference("timeline.showsAvatars") var showsAvatars: Bool = true
}

/// The code of PrefsKit's landing page (`PrefsKit.md`).
@Suite struct OverviewTests {
    @Test func aTypedKeyResolvesFromTheNearestScope() async throws {
        let prefs: any PrefsService = try EmbeddedStore.temporary()

        try await prefs.set(\.showsAvatars, false, scope: "/accounts/alice")
        let avatars = try await prefs.resolve(\.showsAvatars, scope: "/accounts/alice/threads/42")
        // avatars.value == false, avatars.source == .scope("/accounts/alice")

        #expect(avatars.value == false)
        #expect(avatars.source == .scope("/accounts/alice"))
        await (prefs as? EmbeddedStore)?.close()
    }
}
