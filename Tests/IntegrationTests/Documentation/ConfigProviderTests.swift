import Configuration
import ConfigurationTesting
import Foundation
import PrefsClient
import PrefsConfiguration
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// `PrefsConfigProvider` on every backend: swift-configuration's own compatibility suite, live
/// changes through a `ConfigReader`, what locks and overrides resolve to, and the types.
@Suite(.timeLimit(.minutes(5))) struct ConfigProviderTests {
    /// The values `ProviderCompatTest` expects, as prefsd holds them: bytes as base64 strings.
    /// Set at `/apps`, read at `/apps/compat`: every one comes from the nearest scope.
    static let compatValues: [String: JSONValue] = [
        "string": "Hello", "other.string": "Other Hello",
        "int": 42, "other.int": 24,
        "double": 3.14, "other.double": 2.72,
        "bool": true, "other.bool": false,
        "bytes": "bWFnaWM=", "other.bytes": "bWFnaWMy",  // "magic", "magic2"
        "stringy.array": ["Hello", "World"], "other.stringy.array": ["Hello", "Swift"],
        "inty.array": [42, 24], "other.inty.array": [16, 32],
        "doubly.array": [3.14, 2.72], "other.doubly.array": [0.9, 1.8],
        "booly.array": [true, false], "other.booly.array": [false, true, true],
        "byteChunky.array": ["bWFnaWM=", "bWFnaWMy"], "other.byteChunky.array": ["bWFnaWM=", "bWFnaWMy", "bWFnaWM="],
    ]

    @Test(arguments: Backend.allCases)
    func passesSwiftConfigurationsCompatibilitySuite(_ backend: Backend) async throws {
        try await backend.run { service in
            for (key, value) in Self.compatValues {
                try await service.set(key, to: value, scope: "/apps")
            }
            let provider = try await PrefsConfigProvider(service: service, scope: "/apps/compat")
            try await ProviderCompatTest(provider: provider).runTest()
        }
    }

    @Test(arguments: Backend.allCases)
    func aConfigReaderWatchSeesChangesLive(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
            let config = ConfigReader(provider: try await PrefsConfigProvider(service: service, scope: "/accounts/alice"))
            let seen = try await config.watchInt(forKey: "timeline.fontSize") { sizes in
                var seen: [Int?] = []
                for await size in sizes {
                    seen.append(size)
                    switch size {
                    case 16:
                        try await service.set("timeline.fontSize", to: 30, scope: "/accounts")  // hidden by alice's 16
                        try await service.set("timeline.fontSize", to: 20, scope: "/accounts/alice")
                    case 20: try await service.reset("timeline.fontSize", scope: "/accounts/alice", recursive: false)
                    default: return seen
                    }
                }
                return seen
            }
            #expect(seen == [16, 20, 30])
            // The synchronous reads have the last change too, from memory.
            #expect(config.int(forKey: "timeline.fontSize") == 30)
            #expect(config.scoped(to: "timeline").int(forKey: "fontSize") == 30)
        }
    }

    /// The provider's one prefsd watch resumes after the daemon restarts: a change made while it
    /// was away arrives once, and live changes follow.
    @Test func aWatchCatchesUpAfterTheDaemonRestarts() async throws {
        // Not Sendable; the watch's handler uses it while this test waits on that handler.
        nonisolated(unsafe) let daemon = try await Daemon()
        try await daemon.client.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
        let config = ConfigReader(provider: try await PrefsConfigProvider(service: daemon.client, scope: "/accounts/alice"))
        let seen = try await config.watchInt(forKey: "timeline.fontSize") { sizes in
            var seen: [Int?] = []
            for await size in sizes {
                seen.append(size)
                switch size {
                case 16:
                    await daemon.kill()
                    let offline = try EmbeddedStore(path: daemon.databasePath)
                    try await offline.set("timeline.fontSize", to: 20, scope: "/accounts/alice")
                    await offline.close()
                    try await daemon.start()
                case 20: try await daemon.client.set("timeline.fontSize", to: 22, scope: "/accounts/alice")
                default: return seen
                }
            }
            return seen
        }
        #expect(seen == [16, 20, 22])
    }

    @Test(arguments: Backend.allCases)
    func aSnapshotWatchGetsASnapshotPerChange(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.set("a.b", to: "one")
            let provider = try await PrefsConfigProvider(service: service, scope: "/accounts/alice")
            let values = try await provider.watchSnapshot { snapshots in
                var values: [String?] = []
                for await snapshot in snapshots {
                    let value = try snapshot.value(forKey: ["a", "b"], type: .string).value?.content
                    guard case .string(let text) = value else { return values + [nil] }
                    values.append(text)
                    if text == "one" { try await service.set("a.b", to: "two", scope: "/accounts") } else { break }
                }
                return values
            }
            #expect(values == ["one", "two"])
        }
    }

    @Test(arguments: Backend.allCases)
    func aLockReadsAsTheValueItResolvesTo(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
            try await service.set("timeline.fontSize", to: 12, scope: "/accounts")
            let provider = try await PrefsConfigProvider(service: service, scope: "/accounts/alice")
            let config = ConfigReader(provider: provider)
            let seen = try await config.watchInt(forKey: "timeline.fontSize") { sizes in
                var seen: [Int?] = []
                for await size in sizes {
                    seen.append(size)
                    if size == 16 { try await service.lock("timeline.fontSize", scope: "/accounts") } else { break }
                }
                return seen
            }
            #expect(seen == [16, 12])
            #expect(config.int(forKey: "timeline.fontSize") == 12)
            #expect(try await config.fetchInt(forKey: "timeline.fontSize") == 12)
            #expect(provider.snapshot().providerName == "PrefsConfigProvider[/accounts/alice]")
        }
    }

    /// An override given to the store or the daemon wins over every scope.
    @Test(arguments: [Backend.embedded, .daemon])
    func anOverrideReadsAsItsValue(_ backend: Backend) async throws {
        func check(_ service: any PrefsService) async throws {
            try await service.set("timeline.mode", to: "collapsed", scope: "/accounts/alice")
            let config = ConfigReader(provider: try await PrefsConfigProvider(service: service, scope: "/accounts/alice"))
            #expect(config.string(forKey: "timeline.mode") == "expanded")
            #expect(try await config.fetchString(forKey: "timeline.mode") == "expanded")
        }
        if backend == .daemon {
            let daemon = try await Daemon(arguments: ["--override", #"timeline.mode="expanded""#])
            try await check(daemon.client)
        } else {
            var configuration = StoreConfiguration()
            configuration.overrides = ["timeline.mode": "expanded"]
            try await withStore(EmbeddedStore.temporary(configuration: configuration)) { try await check($0) }
        }
    }

    @Test func typesMapHonestlyAndWhatCannotMapIsAClearError() async throws {
        try await withStore(EmbeddedStore.temporary()) { service in
            try await service.set("timeline.layout", to: ["columns": 2, "dense": true], scope: "/accounts")
            try await service.set("timeline.ratio", to: 2)
            try await service.set("timeline.mixed", to: [1, "two"])
            try await service.set("timeline.big", to: JSONValue(parsing: "12345678901234567890"))
            let provider = try await PrefsConfigProvider(service: service, scope: "/accounts/alice")
            let config = ConfigReader(provider: provider)

            // JSON values read as their text or its bytes; a whole number as a double.
            #expect(config.string(forKey: "timeline.layout") == #"{"columns":2,"dense":true}"#)
            #expect(config.bytes(forKey: "timeline.layout") == Array(#"{"columns":2,"dense":true}"#.utf8))
            #expect(config.double(forKey: "timeline.ratio") == 2)
            #expect(config.string(forKey: "timeline.mixed") == #"[1,"two"]"#)

            // What does not map: a clear error, naming the key, the scope and the source.
            let error = try #require(throws: PrefsError.self) {
                try provider.value(forKey: ["timeline", "layout"], type: .int)
            }
            #expect(error.code == .invalidValue)
            #expect(
                error.message
                    == #"'timeline.layout' at /accounts/alice holds the object {"columns":2,"dense":true} (source: scope:/accounts), which cannot be read as an int (a whole number of at most 64 bits)."#
            )
            #expect(throws: PrefsError.self) { try config.requiredInt(forKey: "timeline.layout") }
            #expect(throws: PrefsError.self) { try provider.value(forKey: ["timeline", "mixed"], type: .intArray) }
            #expect(throws: PrefsError.self) { try provider.value(forKey: ["timeline", "big"], type: .int) }
            #expect(throws: PrefsError.self) { try provider.value(forKey: ["timeline", "ratio"], type: .bool) }
            #expect(throws: PrefsError.self) { try provider.value(forKey: ["timeline", "big"], type: .double) }
            try await service.set("timeline.name", to: "not base64!")
            await #expect(throws: PrefsError.self) { try await provider.fetchValue(forKey: ["timeline", "name"], type: .bytes) }

            // A config key that is no prefsd key name has no value here, so other providers answer it.
            #expect(try provider.value(forKey: ["Timeline", "layout"], type: .string).value == nil)
            #expect(try await provider.fetchValue(forKey: ["Timeline", "layout"], type: .string).value == nil)
        }
    }
}
