import Foundation
import Observation    // withObservationTracking, Observations
import PrefsClient    // PrefsClient: the daemon
import PrefsEngine    // the engine under EmbeddedStore: close(), StoreConfiguration
import PrefsKit
import PrefsStore     // EmbeddedStore: SQLite in this process

// A store of its own in a temporary folder — or, given `--socket PATH`, the daemon there.
let socket = CommandLine.arguments.drop { $0 != "--socket" }.dropFirst().first
let prefs: any PrefsService = try socket.map { PrefsClient(socketPath: $0) } ?? EmbeddedStore.temporary()

try await prefs.register(schemas: ["timeline.fontSize": PreferenceSchema(type: .int, defaultValue: 14)])
try await prefs.set("timeline.fontSize", to: 16, scope: "/accounts/alice")
let resolved = try await prefs.resolve("timeline.fontSize", scope: "/accounts/alice/threads/42", explain: true)
print(resolved.value, resolved.source)
for layer in resolved.chain ?? [] {
    print(" ", layer.layer, layer.value?.description ?? "-")
}

// Every change of the effective value at a scope, replayed from `since`, then live:
try await prefs.set("timeline.fontSize", to: 18, scope: "/accounts")        // hidden by alice's 16: not told
try await prefs.set("timeline.fontSize", to: 17, scope: "/accounts/alice")
let request = WatchRequest(keys: ["timeline.fontSize"], scope: "/accounts/alice", since: resolved.revision)
for try await event in prefs.watch(request) where !event.kind.isNotice {
    print(event.kind, event.value?.description ?? "unset", event.source ?? .none)
    break
}

enum StatusContentMode: String, Codable, CaseIterable, Sendable { case collapsed, expanded }

struct StatusContentModeKey: PreferenceKey {               // a key, declared once (EnvironmentKey style)…
    static let name = "timeline.statusContentMode"
    static let defaultValue = StatusContentMode.collapsed
}
extension PreferenceValues {
    var statusContentMode: StatusContentMode {
        get { self[StatusContentModeKey.self] }
        set { self[StatusContentModeKey.self] = newValue }
    }
    @Preference("compose.maxCharacters") var maxCharacters: Int = 500   // …or in one line
}

@MainActor @Observable final class ComposeModel {              // a SwiftUI-style model
    @ObservationIgnored @PreferenceObserving(\.statusContentMode) var mode   // changes only when its effective value does
    @ObservationIgnored @ScopeBacked(\.maxCharacters) var limit              // a local value, else the scope's
    @ObservationIgnored @DraftObserving var draft: DraftSnapshot?            // the draft, its attachments, its validation
    @ObservationIgnored @ThreadObserving var thread: [DraftSnapshot]         // every draft of the thread, in order
    var title = "New post"                                                    // observed by @Observable itself

    init(draftID: UUID, threadID: String) {
        _draft = DraftObserving(draftID)
        _thread = ThreadObserving(threadID)
    }
}

try await prefs.register(keys: [\.statusContentMode, \.maxCharacters])   // schemas, from the key paths
try await prefs.set(\.statusContentMode, .expanded, scope: "/accounts/alice")
let mode = try await prefs.resolve(\.statusContentMode, scope: "/accounts/alice/threads/t1", explain: true)
print(mode.value, mode.source, mode.chain?.map { "\($0.layer)" }.joined(separator: " ") ?? "")

let draft = try await prefs.createDraft(DraftInput(account: "alice", text: "Hello from PrefsKit", thread: "t1"))
try await prefs.addAttachment(to: draft.id, AttachmentUpload(filename: "hello.txt"), data: Data("hello".utf8))
let notes = FileManager.default.temporaryDirectory.appending(path: "notes-\(UUID()).txt")
try Data("Streamed from the file, never held whole.".utf8).write(to: notes)
try await prefs.addAttachment(to: draft.id, AttachmentUpload(filename: "notes.txt", altText: "Notes"), contentsOf: notes)
try FileManager.default.removeItem(at: notes)

let summary = try await withPrefs(prefs, scope: "/accounts/alice") {   // a plain closure, on the main actor
    let model = ComposeModel(draftID: draft.id, threadID: "t1")
    try await model.$draft.loaded(timeout: .seconds(10))
    try await model.$thread.loaded(timeout: .seconds(10))
    print(model.mode, model.limit, model.draft?.draft.attachments.count ?? 0, model.thread.count)

    // Reading a wrapper inside withObservationTracking tracks exactly what it follows…
    await withCheckedContinuation { changed in
        withObservationTracking { _ = model.mode } onChange: { changed.resume() }
        Task { try await model.$mode.set(.collapsed) }            // stored at /accounts/alice
    }
    print(model.mode, model.$mode.source)                         // the new value is in before observers are told

    // …and Observations { … } gives each new value as an async sequence.
    try await prefs.set(ComposeRules.requireAltTextKey, to: true, scope: "/accounts/alice")
    for await snapshot in Observations({ model.draft }) where snapshot?.validation.valid == false {
        print(snapshot?.validation.problems.map(\.code) ?? [])
        break
    }

    model.limit = 20                                              // a local value: stored nowhere
    print(model.limit, model.$limit.source)

    return try await withPrefs(scope: "threads/t1") {             // narrower: /accounts/alice/threads/t1
        try await withPrefs(\.statusContentMode, .expanded) {     // a value for the code inside only
            let inner = ComposeModel(draftID: draft.id, threadID: "t1")
            return "\(inner.mode) (\(inner.$mode.source)) at \(try PrefsContext.required.scope)"
        }
    }
}
print(summary)

let early = ComposeModel(draftID: draft.id, threadID: "t1")      // outside every withPrefs, no default yet
print(early.mode, early.$mode.source, early.draft == nil)
print(early.$mode.error?.message ?? "")
try await PrefsContext.setDefault(prefs, scope: "/accounts/alice")   // once, at start-up
let model = ComposeModel(draftID: draft.id, threadID: "t1")
try await model.$draft.loaded(timeout: .seconds(10))
print(model.mode, model.$mode.source, model.draft?.validation.valid ?? true)

// Who changed it, when and why: the history of the effective value at a scope, newest first —
// through writes above the scope too — and putting a scope back as it was.
try await prefs.set("timeline.fontSize", to: 20, scope: "/accounts/alice", reason: "bigger for the demo")
let history = try await prefs.history(of: "timeline.fontSize", scope: "/accounts/alice/threads/42")
for step in history.steps {
    let made = "\(step.change.kind) at \(step.change.scope?.path ?? "-") → \(step.value) (\(step.source))"
    print(made + (step.change.reason.map { ": \($0)" } ?? ""))
}
try await prefs.revert("timeline.fontSize", scope: "/accounts/alice", to: history.steps[1].change.revision)
print(try await prefs.resolve("timeline.fontSize", scope: "/accounts/alice").value)

try await prefs.deleteDraft(draft.id, ifRevision: nil)
await (prefs as? EmbeddedStore)?.close()                             // a temporary store removes its folder
