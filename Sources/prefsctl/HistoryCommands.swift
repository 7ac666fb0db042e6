import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl history KEY [--scope S] [--limit N]`
struct HistoryCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show how a key's effective value at a scope changed, newest first: when, who, why, and which layer won.",
        discussion: "A write at the scope or above it, a lock, an unlock or a new schema default each show where they change the value.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String
    @Option(help: "The scope whose effective value to follow.") var scope = "/"
    @Option(help: "The most steps to show.") var limit = 20

    func validate() throws {
        try checkKey(key)
        _ = try parseScope(scope)
        guard (1...ChangeQuery.maximumLimit).contains(limit) else {
            throw ValidationError("--limit takes 1 to \(ChangeQuery.maximumLimit).")
        }
    }

    func execute(_ service: any PrefsService) async throws {
        let history = try await service.history(of: KeyName(key), scope: try parseScope(scope), limit: limit, before: nil)
        if global.json { return Output.json(history) }
        print("\(key) at \(history.scope.path) = \(Output.value(history.current))   [source: \(history.current.source)]")
        guard !history.steps.isEmpty else {
            return print("no change in the log made it what it is (the log starts at revision \(history.oldestRevision))")
        }
        // The author last: its width varies the most.
        var rows = [["REVISION", "TIME", "CHANGE", "VALUE", "SOURCE", "REASON", "AUTHOR"]]
        for step in history.steps {
            rows.append([
                String(step.change.revision), Output.localTime(step.change.time), Output.what(step.change),
                Output.text(step.value), step.source.description, step.change.reason ?? "", Output.author(step.change.author),
            ])
        }
        Output.table(rows)
        if let next = history.next { print("… older steps: the log holds them before revision \(next)") }
    }
}

/// `prefsctl log [--prefix P] [--scope S] [--author A] [--since 2h|REV] [--until …] [--csv | --jsonl]`
struct LogCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the audit log: every change, who made it, when and why; newest first.",
        discussion: "Draft changes show which draft and account, never their text. --csv and --jsonl export every match.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only keys starting with this.") var prefix: String?
    @Option(help: "Only changes at this scope or below.") var scope: String?
    @Option(help: "Only changes by this author (a user, or token:NAME).") var author: String?
    @Option(help: ArgumentHelp("Only changes after this. \(PointInTime.help)", valueName: "point")) var since: PointInTime?
    @Option(help: ArgumentHelp("Only changes up to this. \(PointInTime.help)", valueName: "point")) var until: PointInTime?
    @Option(help: "The most changes to show (50 by default; every match for --csv and --jsonl).") var limit: Int?
    @Flag(help: "Oldest first.") var oldestFirst = false
    @Flag(help: "Export as CSV.") var csv = false
    @Flag(help: "Export as JSON lines.") var jsonl = false

    func validate() throws {
        if let scope { _ = try parseScope(scope) }
        if let limit, limit < 1 { throw ValidationError("--limit takes a number ≥ 1.") }
        if csv && jsonl { throw ValidationError("Choose one of --csv and --jsonl.") }
    }

    func execute(_ service: any PrefsService) async throws {
        let exporting = csv || jsonl
        let wanted = limit ?? (exporting ? Int.max : 50)
        var query: ChangeQuery? = ChangeQuery(
            prefix: prefix, scope: try scope.map(parseScope), author: author, since: since?.bound, until: until?.bound,
            limit: min(wanted, exporting ? ChangeQuery.maximumLimit : wanted), order: oldestFirst ? .oldestFirst : .newestFirst)
        // CSV lines end in CRLF (RFC 4180), as the API's do.
        if csv { Output.line(ChangeRecord.csvHeader + "\r") }
        var records: [ChangeRecord] = []
        var shown = 0
        var more = false
        // A table shows one page; an export walks every page it needs.
        while let current = query, shown < wanted {
            let page = try await service.changes(current)
            let changes = page.changes.prefix(wanted - shown)
            shown += changes.count
            if csv { changes.forEach { Output.line($0.csvLine + "\r") } }
            if jsonl { changes.forEach { Output.jsonLine($0) } }
            if !exporting { records += changes }
            query = exporting ? page.next : nil
            more = page.next != nil
        }
        guard !exporting else { return }
        if global.json { return Output.json(records) }
        guard !records.isEmpty else { return print("no change in the log matches") }
        var rows = [["REVISION", "TIME", "CHANGE", "VALUE", "REASON", "AUTHOR"]]
        for record in records {
            rows.append([
                String(record.revision), Output.localTime(record.time), Output.what(record), record.value.map(Output.text) ?? "",
                record.reason ?? "", Output.author(record.author),
            ])
        }
        Output.table(rows)
        if more, let last = records.last {
            print("… more: prefsctl log \(oldestFirst ? "--oldest-first --since \(last.revision)" : "--until \(last.revision - 1)")")
        }
    }
}

/// `prefsctl diff FROM [TO] [--scope S] [--prefix P]`
struct DiffCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff", abstract: "Show the effective values that differ between two points, each with who changed it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("From this point. \(PointInTime.help)", valueName: "from")) var from: PointInTime
    @Argument(help: ArgumentHelp("To this point (default: now).", valueName: "to")) var to: PointInTime?
    @Option(help: "The scope to compare at.") var scope = "/"
    @Option(help: "Only keys starting with this.") var prefix: String?

    func validate() throws {
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        let start = try await from.revision(in: service)
        let end = try await to?.revision(in: service)
        let diff = try await service.diff(from: start, to: end, scope: try parseScope(scope), prefix: prefix)
        if global.json { return Output.json(diff) }
        guard !diff.differences.isEmpty else {
            return print("no effective value at \(diff.scope.path) differs between revisions \(diff.from) and \(diff.to)")
        }
        var rows = [["KEY", "AT \(diff.from)", "AT \(diff.to)", "CHANGED IN", "TIME", "REASON", "BY"]]
        for difference in diff.differences {
            rows.append([
                difference.key, Output.value(difference.before), Output.value(difference.after),
                difference.change.map { String($0.revision) } ?? "", difference.change.map { Output.localTime($0.time) } ?? "",
                difference.change?.reason ?? "", difference.change.map { Output.author($0.author) } ?? "",
            ])
        }
        Output.table(rows)
    }
}

/// `prefsctl revert KEY --scope S --to REV` | `prefsctl revert --prefix P --scope S --to REV`
struct RevertCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Put a key (or every key under a prefix) at a scope back to what it was: value or absence, lock or none.",
        discussion: """
            One new change, in one transaction, whose reason says what it reverted. With --if-revision, only if \
            nothing changed the key at the scope since (exit 4 otherwise, changing nothing).
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The key.") var key: String?
    @Option(help: "Every key starting with this, instead of one key.") var prefix: String?
    @Option(help: "The scope whose entries to put back.") var scope: String?
    @Option(help: ArgumentHelp("The point to put back. \(PointInTime.help)", valueName: "point")) var to: PointInTime?
    @Option(
        help: ArgumentHelp(
            "Put back the value that lost the conflict sync recorded at this revision (prefsctl conflicts lists them), "
                + "instead of a point in time.", valueName: "revision")) var conflict: Int64?
    @Option(help: "Which of the conflict's losers (0: the first).") var loser = 0
    @OptionGroup var revision: KeyRevisionOption

    func validate() throws {
        if conflict != nil {
            guard key == nil, prefix == nil, scope == nil, to == nil else {
                throw ValidationError("--conflict names what to put back by itself: give no KEY, --prefix, --scope or --to.")
            }
            return
        }
        guard let scope, to != nil else { throw ValidationError("Give --scope and --to (or --conflict).") }
        _ = try parseScope(scope)
        switch (key, prefix) {
        case (let key?, nil): try checkKey(key)
        case (nil, .some): break
        default: throw ValidationError("Name a KEY or a --prefix, not \(key == nil ? "neither" : "both").")
        }
    }

    func execute(_ service: any PrefsService) async throws {
        if let conflict {
            let result = try await service.restoreLoser(ofConflict: conflict, loser: loser)
            if global.json { return Output.json(result) }
            return print("put back the loser of conflict \(conflict): now at revision \(result.revision)")
        }
        guard let scope, let to else { return }
        let target: RevertTarget = try key.map { .key(try KeyName($0)) } ?? .prefix(prefix ?? "")
        let point = try await to.revision(in: service)
        let result = try await service.revert(target, scope: try parseScope(scope), to: point, ifRevision: revision.ifRevision)
        if global.json { return Output.json(result) }
        print("reverted \(target.description) at \(scope) to revision \(point): now at revision \(result.revision)")
    }
}
