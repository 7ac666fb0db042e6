import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl status`
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's version, database, revision, counts and main metrics.")
    @OptionGroup var global: GlobalOptions

    mutating func run() async throws {
        let (json, socket) = (global.json, global.socketPath)
        try await global.run { client in try await Self.show(client, json: json, socket: socket) }
    }

    /// Prints the status, and the main figures of the daemon's metrics.
    private static func show(_ client: PrefsClient, json: Bool, socket: String) async throws {
        let status = try await client.status()
        if json { return Output.json(status) }
        let figures = MetricsFigures(text: try await client.metricsText())
        Output.table([
            ["version", status.version],
            ["database", status.database],
            ["socket", socket],
            ["pid", String(status.pid)],
            ["revision", String(status.revision)],
            ["oldest revision", String(status.oldestRevision)],
            ["uptime", String(format: "%.1f s", status.uptimeSeconds)],
            ["keys", String(status.counts.keys)],
            ["values", String(status.counts.values)],
            ["locks", String(status.counts.locks)],
            ["schemas", String(status.counts.schemas)],
            ["overrides", String(status.counts.overrides)],
            ["watchers", String(status.counts.watchers)],
            ["requests", figures.count("prefsd_requests_total")],
            ["request latency, mean", figures.mean("prefsd_request_duration_seconds", scale: 1000, unit: " ms")],
            ["commits", figures.count("prefsd_commits_total")],
            ["requests per commit, mean", figures.mean("prefsd_commit_batch_requests")],
            ["commit sync, mean", figures.mean("prefsd_commit_seconds", scale: 1000, unit: " ms")],
            ["commits after other hosts'", figures.count("prefsd_commit_rebases_total")],
            ["batches run again (conflicts)", figures.count("prefsd_commit_conflicts_total")],
            ["watch events sent", figures.count("prefsd_watch_events_total")],
            ["watches overflowed", figures.count("prefsd_watch_overflows_total")],
            ["watches compacted", figures.count("prefsd_watch_compacted_total")],
            ["change log", figures.count("prefsd_change_log_changes") + " changes"],
            ["revisions behind the database", figures.count("prefsd_revisions_behind")],
        ] + (status.sync.map { sync in
            [
                ["upstream", sync.upstream],
                ["sync", sync.isInStep ? "in step" : "\(sync.outbox) to push, cursor \(sync.cursor) of \(sync.upstreamRevision.map(String.init) ?? "?")"],
                ["conflicts taken in", String(sync.conflicts)],
            ]
        } ?? []))
    }
}

/// `prefsctl get KEY [--scope S] [--explain]`
struct GetCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print a key's effective value at a scope (exit 3 if it has none).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key, e.g. timeline.fontSize.") var key: String
    @Option(help: "The scope to resolve at.") var scope = "/"
    @Flag(help: "Show every layer of the resolution and which one won.") var explain = false
    @Option(help: ArgumentHelp("Read it as it was then. \(PointInTime.help)", valueName: "point")) var at: PointInTime?

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let scope = try parseScope(scope)
        let resolved =
            if let at {
                try await service.resolve(KeyName(key), scope: scope, explain: explain, atRevision: try await at.revision(in: service))
            } else {
                try await service.resolve(key, scope: scope, explain: explain)
            }
        Self.show(resolved, json: global.json, explain: explain)
        if !resolved.isSet { throw ExitCode(3) }
    }

    /// Prints what `get` prints: the value (nothing when unset), its explanation, or JSON.
    static func show(_ resolved: ResolvedPreference, json: Bool, explain: Bool) {
        if json {
            Output.json(resolved)
        } else if explain {
            print("\(resolved.key) at \(resolved.scope.path) = \(resolved.isSet ? Output.text(resolved.value) : "(unset)")   [source: \(resolved.source)]")
            var rows = [["", "LAYER", "VALUE", "REVISION"]]
            var marked = false
            for layer in resolved.chain ?? [] {
                let wins = !marked && layer.layer == resolved.source
                if wins { marked = true }
                rows.append([
                    wins ? "→" : "", layer.layer.description, layer.value.map(Output.text) ?? "-",
                    layer.revision.map(String.init) ?? "",
                ])
            }
            Output.table(rows)
        } else if resolved.isSet {
            print(Output.text(resolved.value))
        }
    }
}

/// `prefsctl set KEY VALUE [--scope S] [--if-revision N]`
struct SetCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set a key's value at a scope (VALUE is JSON if it parses, else a string).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value: 15, true, '\"text\"', '[\"a\"]', or bare text.") var value: String
    @Option(help: "The scope to set it at.") var scope = "/"
    @OptionGroup var revision: KeyRevisionOption

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let result = try await service.set(
            key, to: JSONValue(commandLine: value), scope: try parseScope(scope), ifRevision: revision.ifRevision)
        if global.json { Output.json(result) }
    }
}

/// `prefsctl reset KEY [--scope S] [--recursive] [--if-revision N]`
struct ResetCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Remove a key's value at a scope (and below it, with --recursive).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String
    @Option(help: "The scope to remove it from.") var scope = "/"
    @Flag(help: "Also remove the values set at every scope below.") var recursive = false
    @OptionGroup var revision: KeyRevisionOption

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let result = try await service.reset(
            key, scope: try parseScope(scope), recursive: recursive, ifRevision: revision.ifRevision)
        if global.json { return Output.json(result) }
        if result.removed == 0 {
            print("nothing to reset: '\(key)' has no value at \(scope)\(recursive ? " or below" : "")")
        }
    }
}

/// `prefsctl list [--scope S] [--prefix P]`
struct ListCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the effective values at a scope, with where each comes from.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The scope to resolve at.") var scope = "/"
    @Option(help: "Only keys starting with this.") var prefix: String?

    func validate() throws {
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let scope = try parseScope(scope)
        let preferences = try await service.list(scope: scope, prefix: prefix)
        if global.json {
            struct Answer: Encodable { var scope: ScopePath; var preferences: [ResolvedPreference] }
            return Output.json(Answer(scope: scope, preferences: preferences))
        }
        Output.table([["KEY", "VALUE", "SOURCE"]] + preferences.map { [$0.key, Output.text($0.value), $0.source.description] })
    }
}

/// `prefsctl lock KEY --scope S [--if-revision N]`
struct LockCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "Lock a key at a scope: it keeps that scope's value there and below.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String
    @Option(help: "The scope to lock it at.") var scope: String
    @OptionGroup var revision: KeyRevisionOption

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let result = try await service.lock(key, scope: try parseScope(scope), ifRevision: revision.ifRevision)
        if global.json { Output.json(result) }
    }
}

/// `prefsctl unlock KEY --scope S [--if-revision N]`
struct UnlockCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock", abstract: "Remove a lock (nothing to do, and exit 0, if there is none).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String
    @Option(help: "The scope it is locked at.") var scope: String
    @OptionGroup var revision: KeyRevisionOption

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
    }

    /// Like `reset` of a value that is not there, `unlock` of a lock that is not there succeeds
    /// and says so: the daemon answers it with `removed: 0` (or, before it did, with
    /// `not_found`, which then means the same).
    func execute(_ service: any PrefsService) async throws {
        let result: WriteResult
        do {
            result = try await service.unlock(key, scope: try parseScope(scope), ifRevision: revision.ifRevision)
        } catch let error as PrefsError where error.code == .notFound {
            result = WriteResult(revision: try await service.status().revision, removed: 0)
        }
        if global.json { return Output.json(result) }
        if (result.removed ?? 0) == 0 { print("nothing to unlock: '\(key)' is not locked at \(scope)") }
    }
}
