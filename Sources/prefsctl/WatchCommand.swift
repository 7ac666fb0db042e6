import ArgumentParser
import Foundation
import PrefsKit

/// `prefsctl watch [KEY...] [--prefix P] [--scope S] [--since REV] [--count N] [--timeout S]`
struct WatchCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print changes as they are committed, one line each.",
        discussion: """
            With no key or prefix, every key. With --scope, only changes of the effective value at
            that scope. With --since, first every change after that revision. Progress events
            (shown with --json) carry the current revision to resume from.
            """
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Keys to watch.") var keys: [String] = []
    @Option(help: "Watch keys starting with this (repeatable).") var prefix: [String] = []
    @Option(help: "Follow effective values at this scope.") var scope: String?
    @Option(help: "Replay the changes after this revision first.") var since: Int64?
    @Option(help: "Exit after this many changes.") var count: Int?
    @Option(help: "Exit after this many seconds.") var timeout: Double?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
        if let timeout, timeout <= 0 { throw ValidationError("--timeout must be above 0.") }
        if let since, since < 0 { throw ValidationError("--since must be 0 or more.") }
    }

    func execute(_ service: any PrefsService) async throws {
        let request = WatchRequest(keys: keys, prefixes: prefix, scope: try scope.map(parseScope), since: since)
        let json = global.json
        let count = count
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var seen = 0
                for try await event in service.watch(request) {
                    if json {
                        Output.jsonLine(event)
                    } else if event.kind != .progress {
                        Output.line(Self.describe(event))
                    }
                    if event.kind == .overflow {
                        throw PrefsError(.unavailable, "This watch fell behind and was ended; resume with --since \(event.revision).")
                    }
                    if !event.kind.isNotice {
                        seen += 1
                        if let count, seen >= count { return }
                    }
                }
            }
            if let timeout {
                group.addTask { try await Task.sleep(for: .milliseconds(Int(timeout * 1000))) }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    static func describe(_ event: ChangeEvent) -> String {
        var parts = [String(event.revision), event.kind.rawValue]
        if let key = event.key { parts.append(key) }
        if let scope = event.scope { parts.append(scope.path) }
        if let value = event.value { parts.append(Output.text(value)) }
        if let source = event.source { parts.append("(\(source))") }
        return parts.joined(separator: "  ")
    }
}
