import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl sync [--wait [--timeout S]]`
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Show where a device daemon's sync with its upstream stands; with --wait, sync now.",
        discussion: """
            A device daemon is one started with prefsd --upstream URL. Shown: its upstream, the device (the named \
            token it syncs as) and its scope, how far it has taken in the upstream's changes, how many of its own \
            are still to push, its last exchange, and the conflicts it has taken in since it started. --wait has it \
            exchange until it is in step: exit status 0 then, 69 if the upstream cannot be reached in time.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Sync now, and wait until in step with the upstream.") var wait = false
    @Option(help: ArgumentHelp("How long --wait waits.", valueName: "seconds")) var timeout: Int?

    /// How long `--wait` waits without `--timeout`, and at most.
    static let defaultTimeout = 30
    static let longestTimeout = 600

    func validate() throws {
        guard let timeout else { return }
        guard wait else { throw ValidationError("--timeout goes with --wait.") }
        guard (1...Self.longestTimeout).contains(timeout) else {
            throw ValidationError("--timeout takes 1 to \(Self.longestTimeout) seconds.")
        }
    }

    mutating func run() async throws {
        let seconds = timeout ?? Self.defaultTimeout
        // The daemon answers once in step or at the timeout: the connection waits longer.
        let client = PrefsClient(
            transport: UnixSocketTransport(socketPath: global.socketPath, timeout: .seconds(max(60, seconds + 15))),
            writeRetryDeadline: .milliseconds(Int64((max(0, global.retryFor) * 1000).rounded())),
            userAgent: "prefsctl/\(prefsVersion)")
        do {
            let status = wait ? try await client.syncNow(timeout: .seconds(seconds)) : try await client.syncStatus()
            if global.json { return Output.json(status) }
            Self.show(status)
        } catch let error as PrefsError where error.code == .notFound {
            Output.fail(
                PrefsError(
                    .invalidRequest,
                    "The daemon at \(global.socketPath) has no upstream: it syncs with none. Start it with prefsd --upstream URL --upstream-token-file FILE to make it a device."
                ))
        } catch let error as PrefsError {
            // `unreachable` (69): the daemon, or with --wait its upstream in time; the message says which.
            Output.fail(error)
        }
    }

    /// The status as people read it.
    static func show(_ status: SyncStatus) {
        var rows = [["upstream", status.upstream]]
        if let device = status.device {
            let reach = [status.role?.rawValue, status.scope.map { "at \($0.path)" }].compactMap { $0 }.joined(separator: " ")
            rows.append(["device", reach.isEmpty ? device : "\(device) (\(reach))"])
        } else {
            rows.append(["device", "not known yet: no exchange has succeeded"])
        }
        rows.append(["cursor", cursor(status)])
        rows.append(["outbox", status.outbox == 0 ? "empty: nothing to push" : Output.counted(status.outbox, "change") + " to push"])
        if let last = status.lastExchange {
            let when = Output.localTime(last.time)
            rows.append([
                "last exchange",
                last.succeeded
                    ? "\(when), ok (pushed \(last.pushed), pulled \(last.pulled))"
                    : "\(when), failed: \(last.error ?? "no reason given")",
            ])
            if !last.succeeded, let success = status.lastSuccess {
                rows.append(["last success", Output.localTime(success)])
            }
        } else {
            rows.append(["last exchange", "none since the daemon started"])
        }
        rows.append(["conflicts", "\(status.conflicts) taken in since the daemon started"])
        let width = rows.map { $0[0].count }.max() ?? 0
        for row in rows { print(row[0].padding(toLength: width, withPad: " ", startingAt: 0) + "  " + row[1]) }
        if status.lastExchange?.succeeded == false {
            print("the last exchange failed: \(status.isInStep ? "in step as of the last success" : "not in step with the upstream")")
        } else {
            print(status.isInStep ? "in step with the upstream" : "not in step with the upstream yet")
        }
    }

    /// The cursor against the upstream's newest revision.
    private static func cursor(_ status: SyncStatus) -> String {
        guard status.snapshotTaken else { return "no snapshot of the upstream taken in yet" }
        guard let newest = status.upstreamRevision else { return "revision \(status.cursor) (the upstream's newest not known yet)" }
        let behind = newest - status.cursor
        return "revision \(status.cursor) of the upstream's \(newest)" + (behind > 0 ? " (\(behind) behind)" : "")
    }
}

/// `prefsctl conflicts [--scope S] [--key K] [--since REV|2h] [--limit N]`
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the conflicts sync resolved, newest first: which value won, which lost, and on which devices.",
        discussion: """
            On an upstream prefsd: a device's change met an entry changed since the change was based on it, and the \
            key's merge rule decided (or the change was refused: a lock, the schema, the device's scope). Whatever \
            lost is kept here.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only conflicts at this scope or below.") var scope: String?
    @Option(help: "Only conflicts of this key.") var key: String?
    @Option(help: ArgumentHelp("Only conflicts after this. \(PointInTime.help)", valueName: "point")) var since: PointInTime?
    @Option(help: "The most conflicts to show.") var limit = 50

    func validate() throws {
        if let scope { _ = try parseScope(scope) }
        if let key { try checkKey(key) }
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit takes 1 to 10000.") }
    }

    mutating func run() async throws {
        let (scope, key, since, limit, json) = (
            try self.scope.map(parseScope), try self.key.map { try KeyName($0) }, self.since, self.limit, global.json
        )
        try await global.run { client in
            var after: Revision?
            var from: Date?
            switch since?.bound {
            case .revision(let revision): after = revision
            case .time(let date): from = date
            case nil: break
            }
            let conflicts = try await client.conflicts(
                scope: scope, key: key, since: after, from: from, limit: limit, newestFirst: true)
            if json { return Output.json(ConflictList(conflicts: conflicts)) }
            guard !conflicts.isEmpty else { return print("no conflicts") }
            var rows = [["REVISION", "TIME", "KEY", "SCOPE", "RULE", "WINNER", "LOSERS"]]
            for conflict in conflicts {
                rows.append([
                    String(conflict.revision), Output.localTime(conflict.time), conflict.key,
                    conflict.scope.path, conflict.rule.rawValue, Self.side(conflict.winner, of: conflict),
                    conflict.losers.map { Self.side($0, of: conflict) }.joined(separator: "; "),
                ])
            }
            Output.table(rows)
            for conflict in conflicts where conflict.detail != nil {
                print("revision \(conflict.revision): \(conflict.detail!)")
            }
        }
    }

    /// A side of `conflict` as people read it: its value (or `(none)`) — a draft's by the start
    /// of its text — and the device that made it (or the upstream).
    static func side(_ side: SyncConflict.Side, of conflict: SyncConflict) -> String {
        let draft = conflict.draft != nil ? side.value.flatMap { try? WireJSON.decode(Draft.self, from: $0.canonicalData) } : nil
        let value = draft.map { "draft \"\(DraftPresentation.summary($0.text))\"" } ?? side.value.map(Output.text) ?? "(none)"
        return "\(value) (\(side.device ?? "upstream"))"
    }
}
