import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import PrefsSync
import TestHarness
import Testing

/// The replica inside an app: `EmbeddedStore(path:upstream:)`, the same engine code as
/// `prefsd --upstream`, syncing over HTTP with a real upstream daemon.
@Suite("Embedded replicas", .timeLimit(.minutes(3)))
struct EmbeddedReplicaTests {
    static let alice: ScopePath = "/accounts/alice"

    @Test("two embedded replicas of one daemon: a write on one updates @PreferenceObserving on the other")
    func observingFollowsTheOtherReplica() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let url = "http://127.0.0.1:\(port)"
        let folder = try Self.makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let laptop = try EmbeddedStore(
            path: folder.appending(path: "laptop.sqlite").path,
            upstream: Upstream(url: url, token: try await SyncTests.deviceToken("laptop", on: upstream)))
        let phone = try EmbeddedStore(
            path: folder.appending(path: "phone.sqlite").path,
            upstream: Upstream(url: url, token: try await SyncTests.deviceToken("phone", on: upstream)))
        try await phone.syncNow(timeout: .seconds(20))
        try await withPrefs(phone, scope: Self.alice) {
            nonisolated(unsafe) let model = TimelineModel()
            #expect(model.mode == .collapsed)
            let updates = model.$mode.updates
            // Written on the laptop; pushed at once; the phone's long poll brings it.
            try await laptop.set(\.statusMode, .expanded, scope: Self.alice)
            #expect(await next(updates) { $0 == .expanded } == .expanded)
            #expect(model.$mode.source == .scope(Self.alice))
        }
        let status = try await laptop.syncNow(timeout: .seconds(20))
        #expect(status.isInStep && status.device == "laptop", "\(status)")
        #expect(try await upstream.client.resolve("timeline.statusMode", scope: Self.alice).value == "expanded")
        await laptop.close()
        await phone.close()
        await upstream.expectCleanStop()
    }

    @Test("an embedded replica writes offline, and its changes reach the upstream once it is back")
    func offlineWritesReachTheUpstream() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let folder = try Self.makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = try await SyncTests.deviceToken("laptop", on: upstream)
        let laptop = try EmbeddedStore(
            path: folder.appending(path: "laptop.sqlite").path,
            upstream: Upstream(url: "http://127.0.0.1:\(port)", token: secret))
        try await laptop.syncNow(timeout: .seconds(20))
        _ = await upstream.stop()
        try await laptop.set("ui.theme", to: "dark", scope: Self.alice)
        #expect(try await laptop.resolve("ui.theme", scope: Self.alice).value == "dark")
        #expect(try await laptop.syncStatus().outbox == 1)
        try await upstream.start()
        try await laptop.syncNow(timeout: .seconds(20))
        #expect(try await upstream.client.resolve("ui.theme", scope: Self.alice).value == "dark")
        await laptop.close()
        await upstream.expectCleanStop()
    }

    @Test("an upstream URL that is not http(s), or an empty token, is refused when the store opens")
    func badUpstreamIsRefused() async throws {
        let folder = try Self.makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "p.sqlite").path
        let notHTTP = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, upstream: Upstream(url: "ftp://h:1", token: "t")) }
        #expect(notHTTP?.code == .invalidRequest)
        let empty = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, upstream: Upstream(url: "http://h:1", token: " ")) }
        #expect(empty?.code == .invalidRequest)
    }

    static func makeTemporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefs-replica-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
