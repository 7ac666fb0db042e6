// A compose screen's model on PrefsKit: the drafts of a thread with their attachments, and
// whether each can be posted, kept current as drafts and compose preferences change.
//
//     swift run compose-example                      # an embedded store in a temp folder
//     swift run compose-example --socket PATH       # a running prefsd
import Foundation
import PrefsClient
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
final class ComposeModel {
    @DraftObserving var draft: DraftSnapshot?
    @ThreadObserving var thread: [DraftSnapshot]
    @PreferenceObserving(\.statusContentMode) var mode

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
}

let arguments = CommandLine.arguments
let service: any PrefsService
var temporaryStore: EmbeddedStore?
if let index = arguments.firstIndex(of: "--socket"), index + 1 < arguments.count {
    service = PrefsClient(socketPath: arguments[index + 1])
    print("using prefsd at \(arguments[index + 1])")
} else {
    let store = try EmbeddedStore.temporary()
    temporaryStore = store
    service = store
    print("using an embedded store at \(store.path)")
}

try await service.register(keys: [StatusContentModeKey.self])
let thread = "example-\(UUID().uuidString.prefix(8))"
let opening = try await service.createDraft(DraftInput(account: "alice", text: "A thread about prefsd 🧵", thread: thread))
let second = try await service.createDraft(DraftInput(account: "alice", text: "It keeps preferences in SQLite.", thread: thread))

try await withPrefs(service, scope: "/accounts/alice") {
    let model = ComposeModel(draftID: second.id, threadID: thread)
    await model.$draft.loaded()
    await model.$thread.loaded()
    print("\n— as loaded\n" + model.render())

    let updates = model.$thread.updates
    func show(_ title: String, when done: @Sendable ([DraftSnapshot]) -> Bool) async {
        for await snapshots in updates where done(snapshots) { break }
        print("\n— \(title)\n" + model.render())
    }

    let photo = AsyncThrowingStream<Data, any Error> { $0.yield(Data(repeating: 0x42, count: 64 * 1024)); $0.finish() }
    _ = try await service.addAttachment(to: second.id, AttachmentUpload(filename: "diagram.png"), ifRevision: nil, bytes: photo)
    await show("after attaching a picture") { $0.last?.draft.attachments.count == 1 }

    try await service.set(ComposeRules.requireAltTextKey, to: true, scope: "/accounts/alice")
    await show("after the account requires alt text") { $0.last?.validation.valid == false }

    try await service.set(\.maxCharacters, 20, scope: ScopePath("/accounts/alice/threads/\(thread)"))
    await show("after this thread allows only 20 characters") { $0.first?.validation.valid == false }

    var patch = DraftPatch()
    patch.position = .set(0)
    _ = try await service.updateDraft(second.id, patch, ifRevision: nil)
    await show("after moving the second draft first") { $0.first?.draft.id == second.id }

    try await model.$mode.set(.expanded)
    for await mode in model.$mode.updates where mode == .expanded { break }
    print("\n— after choosing expanded statuses for alice (source: \(model.$mode.source))\n" + model.render())
}

try await service.deleteDraft(opening.id, ifRevision: nil)
try await service.deleteDraft(second.id, ifRevision: nil)
temporaryStore?.close()
