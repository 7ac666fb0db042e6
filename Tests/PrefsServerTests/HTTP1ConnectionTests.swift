import Foundation
import NIOCore
import NIOEmbedded
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``ConnectionOptions`` and the bearer token's check. (``HTTP1ConnectionHandler``'s rules are
/// checked on a real daemon, on every path: `HTTPFramingTests`.)
@Suite struct HTTP1ConnectionTests {
    @Test("Connection is a list of options in any case, over any number of lines")
    func connectionOptions() {
        let cases: [([String], close: Bool, keepAlive: Bool)] = [
            ([], false, false), (["close"], true, false), (["CLOSE"], true, false), (["  Close\t"], true, false),
            (["close, TE"], true, false), (["keep-alive, close"], true, true), (["TE,close"], true, false),
            (["keep-alive"], false, true), (["Keep-Alive", "close"], true, true), (["closed"], false, false),
            (["upgrade"], false, false), ([",,close,,"], true, false), (["clo se"], false, false),
        ]
        for (lines, close, keepAlive) in cases {
            let options = ConnectionOptions(lines)
            #expect(options.close == close, "\(lines)")
            #expect(options.keepAlive == keepAlive, "\(lines)")
        }
        #expect(ConnectionOptions(nil) == ConnectionOptions([String]()))
        #expect(ConnectionOptions("close").persists(http10: false) == false)
        #expect(ConnectionOptions(nil).persists(http10: false))
        #expect(ConnectionOptions(nil).persists(http10: true) == false)
        #expect(ConnectionOptions("keep-alive").persists(http10: true))
        #expect(ConnectionOptions("keep-alive, close").persists(http10: true) == false)
    }

    @Test("The bearer scheme in any case, the token exactly")
    func bearer() {
        let token = BearerToken(bytes: Array("s3cret".utf8))
        for (header, matches) in [
            ("Bearer s3cret", true), ("bearer s3cret", true), ("BEARER s3cret", true), ("Bearer   s3cret", true),
            ("Bearer S3cret", false), ("Bearer s3cre", false), ("Bearer s3crett", false), ("Bearers3cret", false),
            ("Bearer", false), ("Bearer ", false), ("Basic s3cret", false), ("Bearer\ts3cret", false), ("", false),
            ("Bearer\u{0}s3cret", false), ("Dearer s3cret", false),
        ] {
            #expect((BearerToken.credentials(header).map(token.matches) ?? false) == matches, "\(header)")
        }
        #expect(BearerToken.credentials("Bearer ") == nil)
        #expect(!BearerToken(bytes: []).matches([]))
    }
}
