import Foundation
import Observation
import PrefsEngine
import PrefsKit
import PrefsStore
import Testing

enum Density: String, Codable, CaseIterable, Sendable { case compact, comfortable }

struct DensityKey: PreferenceKey {
    static let name = "timeline.density"
    static let defaultValue = Density.comfortable
}

extension PreferenceValues {
    var density: Density {
        get { self[DensityKey.self] }
        set { self[DensityKey.self] = newValue }
    }
    @Preference("timeline.fontSize") var fontSize: Int = 14
}

@MainActor @Observable final class TimelineModel {
    @ObservationIgnored @PreferenceObserving(\.density) var density   // the scope's value
    @ObservationIgnored @ScopeBacked(\.fontSize) var fontSize         // a local value, else the scope's
}

/// The code of "Getting Started with PrefsKit" (`GettingStarted.md`), in the article's order.
@Suite(.timeLimit(.minutes(5))) struct GettingStartedTests {
    @Test func keysAreInferredSchemas() {
        #expect(DensityKey.schema.type == .enum)
        #expect(DensityKey.schema.choices == ["compact", "comfortable"])
    }

    @MainActor @Test func theArticleRunsAsItSays() async throws {
        let prefs: any PrefsService = try EmbeddedStore.temporary()   // or PrefsClient(socketPath:)
        try await prefs.register(keys: [\.density, \.fontSize])
        try await prefs.set(\.fontSize, 16, scope: "/accounts/alice")
        let size = try await prefs.resolve(\.fontSize, scope: "/accounts/alice/threads/42")
        // size.value == 16, size.source == .scope("/accounts/alice")
        #expect(size.value == 16)
        #expect(size.source == .scope("/accounts/alice"))

        let seen = try await withPrefs(prefs, scope: "/accounts/alice") {
            let model = TimelineModel()
            try await model.$density.set(.compact)                 // stored at /accounts/alice
            for await density in model.$density.updates where density == .compact { break }
            model.fontSize = 20                                    // a local value: stored nowhere
            return (model.density, model.fontSize, model.$fontSize.source)
        }
        // seen == (.compact, 20, .local)
        #expect(seen == (Density.compact, 20, PreferenceSource.local))
        #expect(try await prefs.resolve(\.fontSize, scope: "/accounts/alice").value == 16)

        var sizes: [Int] = []
        for try await size in prefs.values(of: \.fontSize, scope: "/accounts/alice/threads/42") {
            sizes.append(size)                                     // the current value first, then each new one
            if sizes.count == 2 { break }
            try await prefs.set(\.fontSize, 18, scope: "/accounts/alice")
        }
        // sizes == [16, 18]
        #expect(sizes == [16, 18])

        let start = try await prefs.resolve(\.fontSize, scope: "/accounts/alice")
        try await prefs.set(\.fontSize, 17, scope: "/accounts/alice")
        let request = WatchRequest(keys: ["timeline.fontSize"], scope: "/accounts/alice", since: start.revision)
        var changes: [ChangeEvent] = []
        for try await event in prefs.watch(request) where !event.kind.isNotice {
            changes.append(event)                                  // .set, 17, source scope:/accounts/alice
            break
        }
        #expect(changes.map(\.kind) == [.set])
        #expect(changes.first?.value == 17)
        #expect(changes.first?.source == .scope("/accounts/alice"))
        await (prefs as? EmbeddedStore)?.close()
    }
}
