import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// `prefsctl` against a real `prefsd`: values across scopes, explain, locks, schemas, exit codes.
@Suite struct PreferencesCLITests {
    @Test func setGetAcrossScopesWithSources() async throws {
        let daemon = try await Daemon()
        #expect(try await daemon.prefsctl("set", "timeline.fontSize", "16", "--scope", "/accounts/alice").status == 0)
        #expect(try await daemon.prefsctl("set", "ui.theme", "dark").status == 0)

        let nested = try await daemon.prefsctl("get", "timeline.fontSize", "--scope", "/accounts/alice/threads/42")
        #expect(nested.status == 0)
        #expect(nested.output == "16")
        // Bare text is stored as a string and printed bare.
        #expect(try await daemon.prefsctl("get", "ui.theme", "--scope", "/accounts/bob").output == "dark")

        let json = try await daemon.prefsctl("--json", "get", "timeline.fontSize", "--scope", "/accounts/alice/threads/42")
        let resolved = try JSONDecoder().decode(ResolvedPreference.self, from: Data(json.stdout.utf8))
        #expect(resolved.value == 16)
        #expect(resolved.source == .scope("/accounts/alice"))
        #expect(resolved.scope == "/accounts/alice/threads/42")

        let explained = try await daemon.prefsctl("--json", "get", "timeline.fontSize", "--scope", "/accounts/alice/x", "--explain")
        let chain = try #require(try JSONDecoder().decode(ResolvedPreference.self, from: Data(explained.stdout.utf8)).chain)
        #expect(chain.map(\.layer.description) == ["scope:/accounts/alice/x", "scope:/accounts/alice", "scope:/accounts", "scope:/"])
        #expect(chain[1].value == 16)
        #expect(chain[0].value == nil)

        let human = try await daemon.prefsctl("get", "timeline.fontSize", "--scope", "/accounts/alice/x", "--explain")
        #expect(human.stdout.contains("source: scope:/accounts/alice"))
        #expect(human.stdout.contains("→  scope:/accounts/alice"))
    }

    @Test func unsetKeyPrintsNothingAndExits3() async throws {
        let daemon = try await Daemon()
        let result = try await daemon.prefsctl("get", "never.set")
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
    }

    @Test func resetAndRecursiveReset() async throws {
        let daemon = try await Daemon()
        for scope in ["/", "/a", "/a/b", "/c"] {
            #expect(try await daemon.prefsctl("set", "k.v", "\"\(scope)\"", "--scope", scope).status == 0)
        }
        #expect(try await daemon.prefsctl("reset", "k.v", "--scope", "/a/b").status == 0)
        #expect(try await daemon.prefsctl("get", "k.v", "--scope", "/a/b").output == "/a")
        #expect(try await daemon.prefsctl("reset", "k.v", "--scope", "/", "--recursive").status == 0)
        #expect(try await daemon.prefsctl("get", "k.v", "--scope", "/c").status == 3)
    }

    @Test func ifRevisionChangesOnlyAKeyStillAtThatRevision() async throws {
        let daemon = try await Daemon()
        let created = try await daemon.prefsctl("--json", "set", "k.v", "1", "--scope", "/a", "--if-revision", "0")
        #expect(created.status == 0)
        let revision = try JSONDecoder().decode(WriteResult.self, from: Data(created.stdout.utf8)).revision
        // Taken: a second create-only set is stale, exit 4, and says what to do.
        let again = try await daemon.prefsctl("set", "k.v", "2", "--scope", "/a", "--if-revision", "0")
        #expect(again.status == 4)
        #expect(again.stderr.contains("'k.v' is at revision \(revision) at /a, not 0; nothing was changed."), "\(again.stderr)")
        #expect(try await daemon.prefsctl("get", "k.v", "--scope", "/a").output == "1")
        #expect(try await daemon.prefsctl("set", "k.v", "2", "--scope", "/a", "--if-revision", "\(revision)").status == 0)
        #expect(try await daemon.prefsctl("reset", "k.v", "--scope", "/a", "--if-revision", "\(revision)").status == 4)
        #expect(try await daemon.prefsctl("lock", "k.v", "--scope", "/a", "--if-revision", "\(revision)").status == 4)
        #expect(try await daemon.prefsctl("lock", "k.v", "--scope", "/a", "--if-revision", "\(revision + 1)").status == 0)
        #expect(try await daemon.prefsctl("unlock", "k.v", "--scope", "/a", "--if-revision", "\(revision + 1)").status == 4)
        #expect(try await daemon.prefsctl("unlock", "k.v", "--scope", "/a", "--if-revision", "\(revision + 2)").status == 0)
        #expect(try await daemon.prefsctl("reset", "k.v", "--scope", "/a", "--if-revision", "\(revision + 1)").status == 0)
        #expect(try await daemon.prefsctl("get", "k.v", "--scope", "/a").status == 3)
        // A revision that is not one: a usage error, exit 2, before the daemon is asked.
        let usage = try await daemon.prefsctl("set", "k.v", "3", "--if-revision=-1")
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("--if-revision takes a revision"), "\(usage.stderr)")
    }

    @Test func lockPinsTheLockScopesValueAndRefusesSetsBelowIt() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "net.proxy", "corp", "--scope", "/accounts")
        _ = try await daemon.prefsctl("set", "net.proxy", "mine", "--scope", "/accounts/alice")
        #expect(try await daemon.prefsctl("lock", "net.proxy", "--scope", "/accounts").status == 0)

        let below = try await daemon.prefsctl("set", "net.proxy", "other", "--scope", "/accounts/alice/x")
        #expect(below.status == 4)
        #expect(below.stderr.contains("locked at /accounts"))
        let json = try await daemon.prefsctl("--json", "get", "net.proxy", "--scope", "/accounts/alice")
        let resolved = try JSONDecoder().decode(ResolvedPreference.self, from: Data(json.stdout.utf8))
        #expect(resolved.value == "corp")
        #expect(resolved.source == .lock("/accounts"))

        // At the lock's own scope the value can change; everyone below follows.
        #expect(try await daemon.prefsctl("set", "net.proxy", "corp2", "--scope", "/accounts").status == 0)
        #expect(try await daemon.prefsctl("get", "net.proxy", "--scope", "/accounts/alice").output == "corp2")

        let unlocked = try await daemon.prefsctl("unlock", "net.proxy", "--scope", "/accounts")
        #expect(unlocked.status == 0)
        #expect(unlocked.stdout.isEmpty)
        #expect(try await daemon.prefsctl("get", "net.proxy", "--scope", "/accounts/alice").output == "mine")
    }

    @Test func resetAndUnlockOfNothingAnswerAlike() async throws {
        let daemon = try await Daemon()
        let reset = try await daemon.prefsctl("reset", "net.proxy", "--scope", "/accounts")
        #expect(reset.status == 0)
        #expect(reset.output == "nothing to reset: 'net.proxy' has no value at /accounts")
        let recursive = try await daemon.prefsctl("reset", "net.proxy", "--scope", "/accounts", "--recursive")
        #expect(recursive.output == "nothing to reset: 'net.proxy' has no value at /accounts or below")
        let unlock = try await daemon.prefsctl("unlock", "net.proxy", "--scope", "/accounts")
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.output == "nothing to unlock: 'net.proxy' is not locked at /accounts")
        for verb in ["reset", "unlock"] {
            let json = try await daemon.prefsctl("--json", verb, "net.proxy", "--scope", "/accounts")
            #expect(json.status == 0)
            let result = try JSONDecoder().decode(WriteResult.self, from: Data(json.stdout.utf8))
            #expect(result.revision == 0)
            #expect((result.removed ?? 0) == 0)
        }
    }

    @Test func schemasFromFileAndCLIRefuseBadValues() async throws {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-schema-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let schemaFile = folder.appending(path: "schema.json")
        try Data(
            """
            {"timeline.fontSize": {"type": "int", "default": 14, "min": 8, "max": 72},
             "timeline.mode": {"type": "enum", "choices": ["collapsed", "expanded"], "default": "collapsed"}}
            """.utf8
        ).write(to: schemaFile)
        let daemon = try await Daemon(arguments: ["--schema", schemaFile.path, "--strict"], folder: folder)

        let json = try await daemon.prefsctl("--json", "get", "timeline.fontSize")
        #expect(try JSONDecoder().decode(ResolvedPreference.self, from: Data(json.stdout.utf8)).source == .default)
        #expect(try await daemon.prefsctl("get", "timeline.fontSize").output == "14")

        for (value, reason) in [("100", "at most 72"), ("\"big\"", "of type int"), ("14.5", "of type int")] {
            let refused = try await daemon.prefsctl("set", "timeline.fontSize", value)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains(reason))
        }
        #expect(try await daemon.prefsctl("set", "timeline.mode", "wide").stderr.contains("one of"))
        let strict = try await daemon.prefsctl("set", "no.schema", "1")
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("--strict"))
        #expect(try await daemon.prefsctl("get", "timeline.fontSize").output == "14")

        let extra = folder.appending(path: "extra.json")
        try Data(#"{"ui.theme": {"type": "string", "maxLength": 5}}"#.utf8).write(to: extra)
        #expect(try await daemon.prefsctl("schema", "load", extra.path).status == 0)
        #expect(try await daemon.prefsctl("set", "ui.theme", "toolong").stderr.contains("at most 5 characters"))
        #expect(try await daemon.prefsctl("set", "ui.theme", "dark").status == 0)
        #expect(try await daemon.prefsctl("schema", "show", "ui.theme").stdout.contains("\"maxLength\" : 5"))
        #expect(try await daemon.prefsctl("schema", "list").stdout.contains("timeline.mode"))
        #expect(try await daemon.prefsctl("schema", "show", "nope.nope").status == 3)
    }

    @Test func listShowsEffectiveValuesWithSources() async throws {
        let daemon = try await Daemon(arguments: ["--override", "ui.debug=true"])
        _ = try await daemon.prefsctl("set", "ui.theme", "dark")
        _ = try await daemon.prefsctl("set", "ui.font", "mono", "--scope", "/accounts/alice")
        _ = try await daemon.prefsctl("set", "other.key", "1")
        let human = try await daemon.prefsctl("list", "--scope", "/accounts/alice", "--prefix", "ui.")
        let lines = human.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(lines.map { $0.first.map(String.init) } == ["KEY", "ui.debug", "ui.font", "ui.theme"])
        #expect(lines[1].last == "override")
        #expect(lines[2].last == "scope:/accounts/alice")
        #expect(lines[3].last == "scope:/")
    }

    @Test func dumpAndLoadRoundTripExactly() async throws {
        let source = try await Daemon()
        _ = try await source.prefsctl("set", "a.b", #"{"x": [1, 2.5, "s"], "y": null}"#, "--scope", "/accounts/alice")
        _ = try await source.prefsctl("set", "a.c", "true")
        _ = try await source.prefsctl("lock", "a.c", "--scope", "/accounts")
        let dump = try await source.prefsctl("dump")
        #expect(dump.status == 0)

        let target = try await Daemon()
        let loaded = try await CommandResult.run("prefsctl", ["--socket", target.socketPath, "load", "-"], stdin: Data(dump.stdout.utf8))
        #expect(loaded.status == 0)
        #expect(try await target.prefsctl("dump").stdout == dump.stdout)
        #expect(try await target.prefsctl("dump", "--scope", "/accounts/alice").stdout.contains("\"/accounts/alice\""))
    }

    @Test func loadMergesAndReplaceMakesTheSubtreeTheDump() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "a.b", "1", "--scope", "/accounts/alice")
        _ = try await daemon.prefsctl("set", "a.c", "2", "--scope", "/accounts/alice/x")
        _ = try await daemon.prefsctl("set", "a.d", "3", "--scope", "/accounts/bob")
        let dump = try await daemon.prefsctl("dump", "--scope", "/accounts/alice")
        _ = try await daemon.prefsctl("set", "a.e", "4", "--scope", "/accounts/alice/y")
        _ = try await daemon.prefsctl("lock", "a.e", "--scope", "/accounts/alice")
        let file = daemon.folder.appending(path: "alice.json")
        try Data(dump.stdout.utf8).write(to: file)

        let merged = try await daemon.prefsctl("load", file.path)
        #expect(merged.status == 0)
        #expect(merged.output.hasPrefix("loaded 2 values, 0 locks, 0 schemas (revision "))
        let mergedDump = try await daemon.prefsctl("--json", "dump", "--scope", "/accounts/alice")
        let kept = try JSONDecoder().decode(PrefsDump.self, from: Data(mergedDump.stdout.utf8))
        #expect(kept.values.map(\.key) == ["a.b", "a.c", "a.e"])
        #expect(kept.locks.map(\.key) == ["a.e"])

        let replaced = try await daemon.prefsctl("load", "--replace", file.path)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try await daemon.prefsctl("dump", "--scope", "/accounts/alice").stdout == dump.stdout)
        #expect(try await daemon.prefsctl("get", "a.d", "--scope", "/accounts/bob").output == "3")
    }

    @Test func loadOfAFileThatIsNotADumpSaysSo() async throws {
        let daemon = try await Daemon()
        for (content, reason) in [
            (#"{"timeline.fontSize": 16}"#, #"expected an object with "format""#),
            ("[1, 2]", #"expected an object with "format""#),
            ("{not json", "it is not JSON"),
            (#"{"format": 1, "values": [{"key": "a.b", "scope": "/"}]}"#, #"at values.0: "value" is missing."#),
        ] {
            let result = try await CommandResult.run("prefsctl", ["--socket", daemon.socketPath, "load", "-"], stdin: Data(content.utf8))
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("prefsctl: - is not a prefsctl dump: "), "\(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!result.stderr.contains("CodingKeys"))
        }
    }

    @Test func malformedDumpAppliesNothing() async throws {
        let daemon = try await Daemon()
        let bad = #"{"format": 1, "scope": "/", "schemas": {}, "locks": [], "values": [{"key": "ok.key", "scope": "/", "value": 1}, {"key": "Bad", "scope": "/", "value": 2}]}"#
        let result = try await CommandResult.run("prefsctl", ["--socket", daemon.socketPath, "load", "-"], stdin: Data(bad.utf8))
        #expect(result.status == 1)
        #expect(try await daemon.prefsctl("get", "ok.key").status == 3)
        let garbage = try await CommandResult.run("prefsctl", ["--socket", daemon.socketPath, "load", "-"], stdin: Data("{not json".utf8))
        #expect(garbage.status == 1)
        #expect(try await daemon.client.status().revision == 0)
    }

    @Test func statusReportsTheDatabaseAndCounts() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "a.b", "1")
        let json = try await daemon.prefsctl("--json", "status")
        let status = try JSONDecoder().decode(ServiceStatus.self, from: Data(json.stdout.utf8))
        #expect(status.database == daemon.databasePath)
        #expect(status.revision == 1)
        #expect(status.counts.values == 1)
        #expect(try await daemon.prefsctl("status").stdout.contains(daemon.databasePath))
    }

    @Test func usageErrorsExit2WithTheVerbsUsageAndUnreachableDaemonExits69() async throws {
        #expect(try await CommandResult.run("prefsctl", ["frobnicate"]).status == 2)
        #expect(try await CommandResult.run("prefsctl", ["get"]).status == 2)
        for arguments in [["get", "Timeline"], ["get", "a.b", "--scope", "a"], ["--json", "set", "a..b", "1"]] {
            let usage = try await CommandResult.run("prefsctl", arguments)
            #expect(usage.status == 2, "\(arguments)")
            #expect(usage.stderr.contains("Usage: prefsctl \(arguments.first { !$0.hasPrefix("-") }!) "), "\(usage.stderr)")
        }
        let typo = try await CommandResult.run("prefsctl", ["gte", "a.b"])
        #expect(typo.stderr.hasPrefix("Error: Unknown verb 'gte'. Did you mean 'get'?\nUsage: prefsctl <subcommand>"), "\(typo.stderr)")
        let subTypo = try await CommandResult.run("prefsctl", ["drafts", "shwo", "x"])
        #expect(subTypo.status == 2)
        #expect(subTypo.stderr.hasPrefix("Error: Unknown verb 'shwo'. Did you mean 'show'?\nUsage: prefsctl drafts <subcommand>"), "\(subTypo.stderr)")
        let missing = try await CommandResult.run("prefsctl", ["--socket", "/tmp/prefsd-missing-\(UUID().uuidString.prefix(6)).sock", "get", "a.b"])
        #expect(missing.status == 69)
        #expect(missing.stderr.contains("Start the daemon with `prefsd`"))
    }
}
