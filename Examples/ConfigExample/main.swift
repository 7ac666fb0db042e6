import Configuration        // ConfigReader (apple/swift-configuration)
import PrefsClient
import PrefsConfiguration   // PrefsConfigProvider
import PrefsKit
import PrefsStore

// A store of its own in a temporary folder — or, given `--socket PATH`, the daemon there.
let socket = CommandLine.arguments.drop { $0 != "--socket" }.dropFirst().first
let prefs: any PrefsService = try socket.map { PrefsClient(socketPath: $0) } ?? EmbeddedStore.temporary()
try await prefs.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
try await prefs.set("http.timeouts", to: [5, 10, 30])

// The effective values at one scope, read from memory, kept current by one prefsd watch.
let config = ConfigReader(provider: try await PrefsConfigProvider(service: prefs, scope: "/accounts/alice"))
print(config.int(forKey: "timeline.fontSize", default: 14))
print(config.scoped(to: "http").intArray(forKey: "timeouts") ?? [])   // set at /, seen from below

try await config.watchInt(forKey: "timeline.fontSize", default: 14) { sizes in
    for await size in sizes {
        print("fontSize:", size)
        guard size == 16 else { break }
        try await prefs.set("timeline.fontSize", to: 18, scope: "/accounts")   // hidden by alice's 16…
        try await prefs.lock("timeline.fontSize", scope: "/accounts")          // …until locked: 18, live
    }
}
