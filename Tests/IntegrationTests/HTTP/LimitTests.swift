import Foundation
import PrefsClient
import PrefsKit
import Testing

/// Every bound the daemon keeps is configurable, and a request past one gets a clear 4xx and
/// changes nothing.
@Suite struct LimitTests {
    @Test func watchesAndBatchesPastTheirLimitsAreRefused() async throws {
        let daemon = try await Daemon(arguments: ["--max-watches", "2", "--max-batch-operations", "3"])
        let open = try (0..<2).map { _ in
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send("GET /v1/watch?key=a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n")
            return socket
        }
        // A watch is subscribed before its answer's head and opening comment are sent.
        for socket in open {
            let opening = await socket.read(until: ": watching")
            #expect(opening.contains(": watching"), "\(opening)")
        }
        let watchers = try await daemon.client.status().counts.watchers
        #expect(watchers == 2)
        let third = try await daemon.raw("GET", "/v1/watch?key=a.b")
        #expect(third.status == 429)
        #expect(third.code == "limit_reached")
        #expect(third.body.contains("--max-watches"))

        let operations = (1...4).map { #"{"op": "set", "key": "k\#($0)", "value": 1}"# }.joined(separator: ",")
        let batch = try await daemon.raw("POST", "/v1/prefs:batch", body: #"{"operations": [\#(operations)]}"#)
        #expect(batch.status == 413)
        #expect(batch.code == "too_large")
        #expect(try await daemon.client.status().revision == 0)
        withExtendedLifetime(open) {}
    }
}
