// A compose screen's model on PrefsKit: the drafts of a thread with their attachments, and
// whether each can be posted, kept current as drafts and compose preferences change.
//
//     swift run compose-example                      # an embedded store in a temp folder
//     swift run compose-example --socket PATH       # a running prefsd
//
// Against a daemon it touches only an account of its own (`/accounts/compose-example-…`), and
// removes what it made there — its drafts and every value set under that scope — when it ends,
// also when it fails or is interrupted (Ctrl-C, SIGTERM).
import Dispatch
import Foundation
import Observation
import PrefsClient
import PrefsEngine
import PrefsKit
import PrefsStore

/// How the timeline shows statuses: one line, or whole.
enum StatusContentMode: String, Codable, CaseIterable, Sendable {
    case collapsed, expanded
}

/// A key declared by hand, EnvironmentKey style.
struct StatusContentModeKey: PreferenceKey {
    static let name = "timeline.statusContentMode"
    static let defaultValue = StatusContentMode.collapsed
}

extension PreferenceValues {
    var statusContentMode: StatusContentMode {
        get { self[StatusContentModeKey.self] }
        set { self[StatusContentModeKey.self] = newValue }
    }

    /// The same in one line.
    @Preference("compose.maxCharacters") var maxCharacters: Int = 500
}

/// The compose screen: the draft being edited and its whole thread.
@MainActor @Observable final class ComposeModel {
    @ObservationIgnored @DraftObserving var draft: DraftSnapshot?
    @ObservationIgnored @ThreadObserving var thread: [DraftSnapshot]
    @ObservationIgnored @PreferenceObserving(\.statusContentMode) var mode

    init(draftID: UUID, threadID: String) {
        _draft = DraftObserving(draftID)
        _thread = ThreadObserving(threadID)
    }

    /// What the screen would show.
    func render() -> String {
        var lines = ["mode: \(mode.rawValue)"]
        for snapshot in thread {
            let marker = snapshot.draft.id == draft?.draft.id ? "▶" : " "
            let state = snapshot.validation.valid ? "ready" : snapshot.validation.problems.map(\.code).joined(separator: ", ")
            lines.append(
                "\(marker) \(snapshot.draft.position ?? 0). \(snapshot.draft.text) [\(snapshot.draft.attachments.count) attachment(s)] — \(state)")
        }
        return lines.joined(separator: "\n")
    }

    /// Waits until the thread shows what `done` looks for, then prints the screen.
    func show(_ title: String, when done: ([DraftSnapshot]) -> Bool) async throws {
        for await snapshots in Observations({ self.thread }) where done(snapshots) { break }
        try Task.checkCancellation()
        say("\n— \(title)\n" + render())
    }
}

/// Writes a line to stdout at once, so that a file or pipe gets each as it happens.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Builds a thread of two drafts for `account` and shows the model as drafts and preferences change.
@MainActor func runExample(on service: any PrefsService, account: String) async throws {
    let scope = try ScopePath("/accounts/\(account)")
    let thread = "\(account)-thread"  // thread ids are shared by accounts: one of its own too
    let opening = try await service.createDraft(DraftInput(account: account, text: "A thread about prefsd 🧵", thread: thread))
    let second = try await service.createDraft(
        DraftInput(account: account, text: "It keeps preferences in SQLite.", thread: thread))

    try await withPrefs(service, scope: scope) {
        let model = ComposeModel(draftID: second.id, threadID: thread)
        try await model.$draft.loaded(timeout: .seconds(30))
        try await model.$thread.loaded(timeout: .seconds(30))
        say("\n— as loaded\n" + model.render())

        let picture = Data(repeating: 0x42, count: 64 * 1024)
        try await service.addAttachment(to: second.id, AttachmentUpload(filename: "diagram.png"), data: picture)
        try await model.show("after attaching a picture") { $0.last?.draft.attachments.count == 1 }

        try await service.set(ComposeRules.requireAltTextKey, to: true, scope: scope)
        try await model.show("after the account requires alt text") { $0.last?.validation.valid == false }

        try await service.set(\.maxCharacters, 20, scope: try ScopePath("\(scope.path)/threads/\(thread)"))
        try await model.show("after this thread allows only 20 characters") { $0.first?.validation.valid == false }

        var patch = DraftPatch()
        patch.position = .set(0)
        _ = try await service.updateDraft(second.id, patch, ifRevision: nil)
        try await model.show("after moving the second draft first") { $0.first?.draft.id == second.id }

        try await model.$mode.set(.expanded)
        for await mode in Observations({ model.mode }) where mode == .expanded { break }
        try Task.checkCancellation()
        say("\n— after choosing expanded statuses for \(account) (source: \(model.$mode.source))\n" + model.render())
    }
    try await service.deleteDraft(opening.id, ifRevision: nil)
}

/// Removes what the example made for `account`: its drafts (with their attachments) and every
/// value and lock at its scope and below.
func removeEverything(of account: String, from service: any PrefsService) async throws {
    for draft in try await service.drafts(account: account, thread: nil) {
        try await service.deleteDraft(draft.id, ifRevision: nil)
    }
    let left = try await service.dump(scope: try ScopePath("/accounts/\(account)"))
    for lock in left.locks {
        try await service.unlock(lock.key, scope: lock.scope)
    }
    if !left.values.isEmpty {
        try await service.apply(PreferenceBatch(operations: left.values.map { .reset($0.key, scope: $0.scope) }))
    }
}

let arguments = CommandLine.arguments
let service: any PrefsService
var temporaryStore: EmbeddedStore?
if let index = arguments.firstIndex(of: "--socket"), index + 1 < arguments.count {
    service = PrefsClient(socketPath: arguments[index + 1])
    say("using prefsd at \(arguments[index + 1])")
} else {
    let store = try EmbeddedStore.temporary()
    temporaryStore = store
    service = store
    say("using an embedded store at \(store.path)")
}
let account = "compose-example-\(UUID().uuidString.prefix(8).lowercased())"
say("as /accounts/\(account), removed at the end")

/// Cancels `task` on SIGINT and SIGTERM instead of ending the process; keep the sources.
func cancelling(_ task: Task<Void, any Error>, onSignals signals: [Int32]) -> [any DispatchSourceSignal] {
    signals.map { signalNumber in
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { task.cancel() }
        source.resume()
        return source
    }
}

// Ctrl-C or SIGTERM cancels the example, which then cleans up like after any failure.
let example = Task { try await runExample(on: service, account: account) }
let interruptions = cancelling(example, onSignals: [SIGINT, SIGTERM])

var failure: (any Error)?
do {
    try await example.value
} catch {
    failure = error
}
do {
    try await removeEverything(of: account, from: service)
} catch {
    say("could not remove what the example made under /accounts/\(account): \(error)")
    failure = failure ?? error
}
await temporaryStore?.close()
if let failure {
    say(failure is CancellationError ? "interrupted" : "failed: \(failure)")
    exit(1)
}
