import Foundation
import PrefsKit
import TestHarness
import Testing

/// A watcher whose client goes away is dropped as soon as its connection closes — not at its next
/// event or progress event — so it holds no memory and no place under `--max-watches`.
@Suite struct WatchDisconnectTests {
    @Test func aClosedWatchConnectionIsUnsubscribedWithoutWaitingForAnEvent() async throws {
        // No progress event for an hour, and nobody writes the watched keys: only the closed
        // connection can end these watches.
        let daemon = try await Daemon(arguments: ["--progress-interval", "3600", "--max-watches", "3"])
        var sockets: [RawSocket] = []
        for index in 0..<3 {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send("GET /v1/watch?key=idle.k\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
            sockets.append(socket)
        }
        try await Self.waitForWatchers(3, on: daemon)
        // The limit is reached while they are open.
        #expect(try await daemon.raw("GET", "/v1/watch?key=one.more").status == 429)

        sockets.removeAll()  // closes the three connections
        try await Self.waitForWatchers(0, on: daemon)
        // Their places are free again.
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send("GET /v1/watch?key=again HTTP/1.1\r\nHost: t\r\n\r\n")
        try await Self.waitForWatchers(1, on: daemon)
    }

    @Test func whatAClientSendsOnItsWatchConnectionIsDroppedAndItsLeavingEndsTheWatch() async throws {
        // No progress event for an hour: on a loaded machine the test may last past the default
        // 15 s, and the stream must hold exactly the change.
        let daemon = try await Daemon(arguments: ["--progress-interval", "3600"])
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send("GET /v1/watch?key=a.b HTTP/1.1\r\nHost: t\r\n\r\n")
        try await Self.waitForWatchers(1, on: daemon)
        // Another request, then bytes that are no HTTP at all: neither is answered, and neither
        // disturbs the stream or the daemon.
        socket.send("GET /v1/status HTTP/1.1\r\nHost: t\r\n\r\n\u{1}\u{2} not http\r\n\r\n")
        #expect(try await daemon.prefsctl("set", "a.b", "5").status == 0)
        // The client closes its side: the daemon ends the watch and closes the connection.
        socket.shutdownSending()
        let answer = await socket.readToEnd()
        #expect(answer.contains(": watching"))
        #expect(parseEvents(answer).map(\.event) == ["set"])
        #expect(answer.contains(#""value":5"#))
        #expect(answer.components(separatedBy: "HTTP/1.1").count == 2, "the request sent after the watch was answered")
        try await Self.waitForWatchers(0, on: daemon)
        #expect(try await daemon.raw("GET", "/v1/prefs/a.b").status == 200)
    }

    /// Polls the daemon's status until it reports `count` watchers (a minute at most: a liveness
    /// bound, far above the milliseconds it takes, not a timing).
    static func waitForWatchers(_ count: Int, on daemon: Daemon) async throws {
        try await waitUntil("the daemon reports \(count) watchers") {
            let status = try await daemon.raw("GET", "/v1/status")
            return try JSONDecoder().decode(ServiceStatus.self, from: Data(status.body.utf8)).counts.watchers == count
        }
    }
}
