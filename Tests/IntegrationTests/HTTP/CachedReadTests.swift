import Foundation
import TestHarness
import Testing

/// Reads the daemon answers from its memo of rendered answers (`AnswerMemo`) against answers made
/// afresh, through the whole real pipeline: same bytes, same order, and never a value older than
/// a write already answered.
@Suite struct CachedReadTests {
    /// One answer of a raw HTTP/1.1 exchange.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// Splits what a connection received into its answers (bodies framed by Content-Length).
    static func answers(in text: String) -> [Answer] {
        var answers: [Answer] = []
        var rest = Substring(text)
        while let end = rest.range(of: "\r\n\r\n") {
            let lines = rest[..<end.lowerBound].split(separator: "\r\n")
            let status = Int(lines[0].split(separator: " ")[1]) ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let body = rest[end.upperBound...].utf8.prefix(length)
            answers.append(Answer(status: status, headers: headers, body: String(decoding: body, as: UTF8.self)))
            rest = Substring(rest[end.upperBound...].utf8.dropFirst(length))
        }
        return answers
    }

    @Test func pipelinedReadsAndWritesAreAnsweredInOrderWithTheRoutersBytes() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "k.v", #"{"b":[1,"x"],"a":null}"#, "--scope", "/accounts/al@ice")
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send(
            "GET /v1/prefs/k.v?scope=%2Faccounts%2Fal%40ice%2Fx HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /v1/prefs/k.v?scope=/accounts/al@ice/x&explain=0 HTTP/1.1\r\nHost: t\r\n\r\n"
                + "PUT /v1/prefs/k.v?scope=/accounts/al@ice HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\n7"
                + "GET /v1/prefs/k.v?scope=/accounts/al@ice/x HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /v1/prefs/Not%20A%20Key HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /v1/prefs/never.set HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let answers = Self.answers(in: await socket.readToEnd())
        try #require(answers.count == 6)
        // The cached answer (first) and the router's (second, `explain=0`) are the same.
        #expect(answers[0].status == 200)
        #expect(answers[0].body == answers[1].body)
        #expect(answers[0].body.contains(#""value":{"a":null,"b":[1,"x"]}"#))
        for name in ["content-type", "server"] { #expect(answers[0].headers[name] == answers[1].headers[name]) }
        #expect(answers[0].headers["date"] != nil)
        // The write, then the read behind it sees it.
        #expect(answers[2].status == 200)
        #expect(answers[3].body.contains(#""source":"scope:/accounts/al@ice","value":7"#))
        // The router words the error for a bad key.
        #expect(answers[4].status == 400)
        #expect(answers[4].body.contains("invalid_key"))
        #expect(answers[5].body.contains(#""source":"none""#))
    }

    @Test func aReadAfterAnAcknowledgedWriteSeesIt() async throws {
        let daemon = try await Daemon()
        for round in 1...20 {
            #expect(try await daemon.prefsctl("set", "counter.value", "\(round)", "--scope", "/a").status == 0)
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send("GET /v1/prefs/counter.value?scope=/a/b HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let answer = try #require(Self.answers(in: await socket.readToEnd()).first)
            #expect(answer.body.contains(#""value":\#(round)}"#), "round \(round): \(answer.body)")
        }
    }
}
