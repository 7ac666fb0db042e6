import PrefsKit
import Testing

@Suite("Watch requests")
struct WatchRequestTests {
    @Test("No keys and no prefixes: every key")
    func everything() {
        let request = WatchRequest()
        #expect(request.selects(key: "a"))
        #expect(request.selects(key: "timeline.fontSize"))
        // A scope or since does not narrow the keys.
        #expect(WatchRequest(scope: "/a", since: 3).selects(key: "anything.at.all"))
    }

    @Test("Exact keys select only themselves")
    func exactKeys() {
        let request = WatchRequest(keys: ["timeline.fontSize", "compose.max"])
        #expect(request.selects(key: "timeline.fontSize"))
        #expect(request.selects(key: "compose.max"))
        #expect(!request.selects(key: "timeline.fontSizeX"))
        #expect(!request.selects(key: "timeline"))
        #expect(!request.selects(key: "timeline.fontSize.sub"))
    }

    @Test("Prefixes are string prefixes")
    func prefixes() {
        let request = WatchRequest(prefixes: ["timeline."])
        #expect(request.selects(key: "timeline.fontSize"))
        #expect(request.selects(key: "timeline.a.b"))
        #expect(!request.selects(key: "timeline"))
        #expect(!request.selects(key: "timelines.x"))
        #expect(!request.selects(key: "compose.timeline.x"))
        #expect(WatchRequest(prefixes: ["time"]).selects(key: "timeline.x"))
    }

    @Test("Keys and prefixes together select their union")
    func union() {
        let request = WatchRequest(keys: ["compose.max"], prefixes: ["timeline."])
        #expect(request.selects(key: "compose.max"))
        #expect(request.selects(key: "timeline.x"))
        #expect(!request.selects(key: "compose.min"))
    }

    @Test("Notice kinds are progress, overflow and shutdown")
    func noticeKinds() {
        let notices: [ChangeEvent.Kind] = [.progress, .overflow, .shutdown]
        let changes: [ChangeEvent.Kind] = [.set, .reset, .lock, .unlock, .schema]
        #expect(notices.allSatisfy { $0.isNotice })
        #expect(!changes.contains { $0.isNotice })
        #expect(changes.map(\.rawValue) == ["set", "reset", "lock", "unlock", "schema"])
    }
}
