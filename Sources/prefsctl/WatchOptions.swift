import ArgumentParser
import Foundation
import PrefsKit

/// Where a watch starts and when it stops (`--since`, `--count`, `--timeout`), and following it:
/// one line per change. Shared by `watch` and `drafts watch`.
struct WatchOptions: ParsableArguments {
    @Option(help: "Replay the changes after this revision first.") var since: Int64?
    @Option(help: "Exit after this many changes.") var count: Int?
    @Option(help: "Exit after this many seconds.") var timeout: Double?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
        if let timeout, timeout <= 0 { throw ValidationError("--timeout must be above 0.") }
        if let since, since < 0 { throw ValidationError("--since must be 0 or more.") }
    }

    /// Prints the changes `request` selects, from `--since` on, until `--count` of them or
    /// `--timeout` seconds; with `json`, every event (progress too) as a line of JSON. A watch
    /// the daemon ends first — it stops (a `shutdown` event) or its connection closes — throws
    /// `unreachable` (exit 69): the changes did not all come.
    func follow(_ request: WatchRequest, on service: any PrefsService, json: Bool) async throws {
        var request = request
        request.since = since
        let events = service.watch(request)
        let count = count
        let since = since
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var seen = 0
                var resumeFrom = since
                for try await event in events {
                    if json {
                        Output.jsonLine(event)
                    } else if event.kind != .progress {
                        Output.line(Self.describe(event))
                    }
                    resumeFrom = event.revision
                    if event.kind == .overflow {
                        throw PrefsError(.unavailable, "This watch fell behind and was ended; resume with --since \(event.revision).")
                    }
                    if event.kind == .shutdown { break }
                    if !event.kind.isNotice {
                        seen += 1
                        if let count, seen >= count { return }
                    }
                }
                throw PrefsError(
                    .unreachable,
                    "prefsd went away: it stopped, ending this watch"
                        + (resumeFrom.map { "; resume with --since \($0) once it is back." } ?? "."))
            }
            if let timeout {
                group.addTask { try await Task.sleep(for: .milliseconds(Int(timeout * 1000))) }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// One change as people read it: revision, kind, then what changed.
    static func describe(_ event: ChangeEvent) -> String {
        var parts = [String(event.revision), event.kind.rawValue]
        if let key = event.key { parts.append(key) }
        if let scope = event.scope { parts.append(scope.path) }
        if let value = event.value { parts.append(Output.text(value)) }
        if let source = event.source { parts.append("(\(source))") }
        if let draft = event.draft { parts.append("draft \(draft)") }
        if let attachment = event.attachment { parts.append("attachment \(attachment)") }
        if let thread = event.thread { parts.append("thread \(thread)") }
        if let draftRevision = event.draftRevision { parts.append("draft revision \(draftRevision)") }
        if let valid = event.valid { parts.append(valid ? "valid" : "invalid") }
        return parts.joined(separator: "  ")
    }
}
