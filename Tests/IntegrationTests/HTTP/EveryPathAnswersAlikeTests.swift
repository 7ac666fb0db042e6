import Foundation
import PrefsKit
import TestHarness
import Testing

/// Each endpoint is defined once: a request gets the same answer — status line, header fields
/// but `Date`, body — whichever listener and path carries it (``HTTPPath``).
@Suite struct EveryPathAnswersAlikeTests {
    /// Requests in the order they are sent on each path; each path's daemon starts from the same
    /// state, so revisions agree.
    static let requests = [
        "GET /v1/prefs/k.v?scope=%2Faccounts%2Fal%40ice%2Fx HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET /v1/prefs/k%2Ev?scope=/accounts/al@ice&explain=1 HTTP/1.1\r\nHost: t\r\n\r\n",
        "HEAD /v1/prefs/k.v HTTP/1.1\r\nHost: t\r\n\r\n",
        "PUT /v1/prefs/k.v?scope=/accounts/al@ice HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\n7",
        "PUT /v1/prefs/k.v?scope=/accounts/al@ice HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\n7",
        "PUT /v1/prefs/k.v HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n{bad}",
        "GET /v1/prefs/Not%20A%20Key HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET /v1/nothing/here HTTP/1.1\r\nHost: t\r\n\r\n",
        "POST /v1/prefs/k.v HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
        "DELETE /v1/prefs/k.v?scope=/accounts/al@ice HTTP/1.1\r\nHost: t\r\n\r\n",
        "PUT /v1/locks/k.v?scope=/accounts HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
        "GET /v1/prefs?scope=/accounts/al@ice HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET /v1/status?minRevision=abc HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET /v1/drafts/not-a-uuid HTTP/1.1\r\nHost: t\r\n\r\n",
        // Conditional writes: the key's revision at /accounts is the lock's (4), at /other 0.
        "GET /v1/prefs/k.v?scope=/accounts HTTP/1.1\r\nHost: t\r\n\r\n",
        "PUT /v1/prefs/k.v?scope=/other HTTP/1.1\r\nHost: t\r\nIf-Match: \"1\"\r\nContent-Length: 1\r\n\r\n8",
        "PUT /v1/prefs/k.v?scope=/other HTTP/1.1\r\nHost: t\r\nIf-Match: 0\r\nContent-Length: 1\r\n\r\n8",
        "DELETE /v1/locks/k.v?scope=/accounts HTTP/1.1\r\nHost: t\r\nIf-Match: W/\"4\"\r\n\r\n",
        "DELETE /v1/locks/k.v?scope=/accounts HTTP/1.1\r\nHost: t\r\nIf-Match: \"4\"\r\n\r\n",
    ]

    /// An answer as compared: everything but the `Date` value, which changes every second, and
    /// `uptime`-like fields (none of these requests has them).
    static func comparable(_ answer: HTTPAnswer?) -> String {
        guard let answer else { return "no answer" }
        let fields = answer.headers.filter { $0.name != "date" }.map { "\($0.name): \($0.value)" }
        return ([answer.statusLine] + fields + [answer.text]).joined(separator: "\n")
    }

    @Test func aRequestGetsTheSameAnswerOnEveryPath() async throws {
        var answersByPath: [HTTPPath: [String]] = [:]
        for path in HTTPPath.allCases {
            let listening = try await ListeningDaemon()
            _ = try await listening.daemon.prefsctl("set", "k.v", #"{"b":[1,"x"],"a":null}"#, "--scope", "/accounts/al@ice")
            var answers: [String] = []
            for request in Self.requests {
                answers.append(Self.comparable(try await listening.exchange(request, on: path)))
            }
            answersByPath[path] = answers
        }
        let front = try #require(answersByPath[.front])
        for path in HTTPPath.allCases where path != .front {
            for (index, request) in Self.requests.enumerated() {
                #expect(answersByPath[path]?[index] == front[index], "\(path): \(request.prefix { $0 != "\r" })")
            }
        }
        // The answers are what the API promises, not merely alike.
        #expect(front[0].hasPrefix("HTTP/1.1 200 OK"))
        #expect(front[1].contains(#""explain""#) || front[1].contains(#""chain""#))
        #expect(front[2].hasPrefix("HTTP/1.1 200 OK") && front[2].hasSuffix("\n"))
        #expect(front[5].hasPrefix("HTTP/1.1 400"))
        #expect(front[6].contains("invalid_key"))
        #expect(front[7].hasPrefix("HTTP/1.1 404"))
        #expect(front[8].hasPrefix("HTTP/1.1 405") && front[8].contains("allow: GET, PUT, DELETE, HEAD"))
        #expect(front[12].hasPrefix("HTTP/1.1 400"))
        #expect(front[13].hasPrefix("HTTP/1.1 400"))
        #expect(front[0].contains("etag: \"0\""), "nothing set or locked at the scope itself")
        #expect(front[14].hasPrefix("HTTP/1.1 200") && front[14].contains("etag: \"4\""))
        #expect(front[15].hasPrefix("HTTP/1.1 412") && front[15].contains(#""currentPreference":{"key":"k.v","locked":false,"revision":0"#))
        #expect(front[16].hasPrefix("HTTP/1.1 200") && front[16].contains(#""revision":5"#))
        #expect(front[17].hasPrefix("HTTP/1.1 400") && front[17].contains("invalid_request"))
        #expect(front[18].hasPrefix("HTTP/1.1 200") && front[18].contains(#""removed":1"#))
    }
}
