import Foundation
import TestHarness
import Testing

/// `prefsctl get` has two parsers: a hand-written one for the plain forms (QuickGet, for start-up
/// time) and ArgumentParser for everything else. Each command line here is given in a form the
/// quick parser takes and in one only ArgumentParser takes (`--scope=…`, `--socket=…`), and
/// both must print the same and exit the same.
@Suite struct QuickGetTests {
    @Test func bothParsersAnswerAlike() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "k.v", "\"top\"")
        _ = try await daemon.prefsctl("set", "k.v", "{\"n\":[1,2.5,null]}", "--scope", "/accounts/al@ice")
        let cases: [(quick: [String], full: [String])] = [
            (["get", "k.v"], ["get", "k.v", "--scope=/"]),
            (["get", "k.v", "--scope", "/accounts/al@ice/x"], ["get", "k.v", "--scope=/accounts/al@ice/x"]),
            (["--json", "get", "k.v", "--scope", "/accounts/al@ice"], ["get", "--json", "k.v", "--scope=/accounts/al@ice"]),
            (["get", "--explain", "k.v", "--scope", "/accounts/al@ice/x"], ["get", "k.v", "--explain", "--scope=/accounts/al@ice/x"]),
            (["get", "k.v", "--json", "--explain"], ["get", "k.v", "--json", "--explain", "--scope=/"]),
            (["get", "never.set"], ["get", "never.set", "--scope=/"]),
            (["get", "Not A Key"], ["get", "Not A Key", "--scope=/"]),
        ]
        for (quick, full) in cases {
            let quickResult = try await daemon.prefsctl(quick)
            let fullResult = try await daemon.prefsctl(full)
            #expect(quickResult.status == fullResult.status, "\(quick)")
            #expect(quickResult.stdout == fullResult.stdout, "\(quick)")
            #expect(quickResult.stderr == fullResult.stderr, "\(quick)")
        }
        #expect(try await daemon.prefsctl("get", "k.v", "--scope", "/accounts/al@ice").output == #"{"n":[1,2.5,null]}"#)
        #expect(try await daemon.prefsctl("get", "never.set").status == 3)
    }

    @Test func aMissingDaemonIsReportedAlike() async throws {
        let socket = "/tmp/prefsd-missing-\(UUID().uuidString.prefix(6)).sock"
        let quick = try await CommandResult.run("prefsctl", ["--socket", socket, "get", "a.b"])
        let full = try await CommandResult.run("prefsctl", ["--socket=\(socket)", "get", "a.b"])
        #expect(quick.status == 69)
        #expect(quick.status == full.status)
        #expect(quick.stderr == full.stderr)
    }

    @Test func unusualCommandLinesStillGetArgumentParsersUsageErrors() async throws {
        for arguments in [["get"], ["get", "a.b", "c.d"], ["get", "a.b", "--scope", "no-slash"], ["get", "a.b", "--bogus"]] {
            let result = try await CommandResult.run("prefsctl", arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("Usage") || result.stderr.contains("Error"), "\(arguments)")
        }
    }
}
