import Foundation
import Observation
import PrefsClient
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness
import Testing

extension PreferenceValues {
    /// A key declared with the macro: its key type's name is generated.
    @Preference("compose.draftLimit") var draftLimit: Int = 500
}

/// A model as a SwiftUI app writes one: on the main actor, `@Observable`, every prefs wrapper
/// marked `@ObservationIgnored` beside a property Observation tracks itself.
@MainActor @Observable final class ScreenModel {
    @ObservationIgnored @PreferenceObserving(\.statusMode) var mode
    @ObservationIgnored @ScopeBacked(\.fontSize) var fontSize
    @ObservationIgnored @DraftObserving var draft: DraftSnapshot?
    @ObservationIgnored @ThreadObserving var thread: [DraftSnapshot]
    @ObservationIgnored @ScopeOrLocal(\.scope) var scope: ScopePath
    var title = "Compose"

    init(draftID: UUID, threadID: String) {
        _draft = DraftObserving(draftID)
        _thread = ThreadObserving(threadID)
    }
}

/// Calls `onChange` the first time Observation reports a change to what `read` reads.
@MainActor func onFirstChange(of read: () -> Void, _ onChange: @escaping @Sendable () -> Void) {
    withObservationTracking(read, onChange: onChange)
}

/// The Swift API as a main-actor app meets it: plain closures, an `@Observable` model, key paths.
@MainActor @Suite struct ObservableModelTests {
    @Test(arguments: Backend.allCases)
    func anObservableModelOnTheMainActorFollowsEveryWrapper(_ backend: Backend) async throws {
        try await backend.run { service in
            let draft = try await service.createDraft(DraftInput(account: "alice", text: "hello", thread: "t"))
            var created: [ScreenModel] = []  // main-actor state the closures below change
            let loaded = try await withPrefs(service, scope: "/accounts/alice") {
                let model = ScreenModel(draftID: draft.id, threadID: "t")
                created.append(model)
                try await model.$draft.loaded(timeout: .seconds(30))
                try await model.$thread.loaded(timeout: .seconds(30))
                #expect(model.mode == .collapsed && model.fontSize == 14 && model.scope == "/accounts/alice")
                #expect(model.thread.map(\.draft.text) == ["hello"])

                // withObservationTracking: a change of another key, or hidden by alice's value, is not one.
                let modeChanged = Flag()
                onFirstChange(of: { _ = model.mode }) { modeChanged.raise() }
                let titleChanged = Flag()
                onFirstChange(of: { _ = model.title }) { titleChanged.raise() }
                var modes = Observations { model.mode }.makeAsyncIterator()
                #expect(await modes.next() == .collapsed)
                try await service.set(\.fontSize, 20, scope: "/accounts/alice")
                try await service.set(\.statusMode, .collapsed, scope: "/accounts")
                try await service.set(\.statusMode, .expanded, scope: "/accounts/alice")
                #expect(await modes.next() == .expanded)
                await modeChanged.raised()
                #expect(model.mode == .expanded)
                #expect(model.fontSize == 20 && model.$fontSize.source == .scope("/accounts/alice"))
                #expect(!titleChanged.isRaised)
                model.title = "Reply"
                await titleChanged.raised()

                // Observations { model.draft } and { model.thread }: each new snapshot.
                var drafts = Observations { model.draft }.makeAsyncIterator()
                #expect(await drafts.next()??.draft.attachments.isEmpty == true)
                try await service.addAttachment(to: draft.id, AttachmentUpload(filename: "a.txt"), data: Data("a".utf8))
                var snapshot = await drafts.next()
                while snapshot??.draft.attachments.count != 1 { snapshot = await drafts.next() }
                var threads = Observations { model.thread }.makeAsyncIterator()
                _ = await threads.next()
                _ = try await service.createDraft(DraftInput(account: "alice", text: "second", thread: "t"))
                var texts = await threads.next()?.map(\.draft.text)
                while texts?.count != 2 { texts = await threads.next()?.map(\.draft.text) }
                #expect(texts == ["hello", "second"])

                // Nested contexts from the main actor, returning what their closures return.
                let inner = try await withPrefs(scope: "threads/t") {
                    try await withPrefs(\.statusMode, .collapsed) {
                        let nested = ScreenModel(draftID: draft.id, threadID: "t")
                        created.append(nested)
                        return (nested.mode, nested.$mode.source, nested.scope)
                    }
                }
                #expect(inner.0 == .collapsed && inner.1 == .local && inner.2 == "/accounts/alice/threads/t")
                return model.draft?.draft.attachments.count
            }
            #expect(loaded == 1)
            #expect(created.count == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func keyPathsNameKeysForSchemasAndExplainedReads(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.register(keys: [\.statusMode, \.draftLimit, \.fontSize])
            let schemas = try await service.schemas()
            #expect(schemas["timeline.statusMode"]?.choices == ["collapsed", "expanded"])
            #expect(schemas["compose.draftLimit"]?.defaultValue == 500)
            #expect(schemas["timeline.fontSize"]?.type == .int)
            await #expect(throws: PrefsError.self) { try await service.register(keys: [\.json]) }

            try await service.set(\.draftLimit, 300, scope: "/accounts")
            let explained = try await service.resolve(\.draftLimit, scope: "/accounts/alice", explain: true)
            #expect(explained.value == 300 && explained.source == .scope("/accounts"))
            let layers = try #require(explained.chain)
            #expect(layers.map(\.layer) == [.scope("/accounts/alice"), .scope("/accounts"), .scope("/"), .default])
            #expect(layers.map(\.value) == [nil, 300, nil, 500])
            #expect(try await service.resolve(\.draftLimit, scope: "/accounts/alice").chain == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func attachmentsComeFromDataAndFromFilesStreamedInPieces(_ backend: Backend) async throws {
        try await backend.run { service in
            let draft = try await service.createDraft(DraftInput(account: "alice", text: "files"))
            let fromData = try await service.addAttachment(
                to: draft.id, AttachmentUpload(filename: "note.txt", altText: "A note"), data: Data("note".utf8))
            #expect(fromData.attachment.byteSize == 4 && fromData.attachment.altText == "A note")

            // Larger than one piece, so it goes in several.
            let bytes = Data((0..<(600 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let file = FileManager.default.temporaryDirectory.appending(path: "prefsd-upload-\(UUID().uuidString).bin")
            try bytes.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = try await service.addAttachment(to: draft.id, contentsOf: file, ifRevision: fromData.draft.revision)
            #expect(fromFile.attachment.filename == file.lastPathComponent)
            #expect(fromFile.attachment.byteSize == Int64(bytes.count))
            var downloaded = Data()
            for try await piece in try await service.attachmentData(fromFile.attachment.id, of: draft.id).bytes {
                downloaded.append(piece)
            }
            #expect(downloaded == bytes)

            let missing = file.appendingPathExtension("missing")
            await #expect(throws: PrefsError.self) { try await service.addAttachment(to: draft.id, contentsOf: missing) }
            #expect(try await service.draft(draft.id).attachments.count == 2)
        }
    }
}

/// `loaded(timeout:)` of the draft and thread wrappers ends: in time, with the error that kept
/// the snapshot out, or on cancellation.
@Suite(.timeLimit(.minutes(5))) struct LoadedTests {
    @Test func loadingTimesOutWhileTheDaemonHangsAndEndsWhenCancelled() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "hi", thread: "t"))
        let process = try #require(daemon.process)
        try await withPrefs(client, scope: "/accounts/alice") {
            #expect(process.send(SIGSTOP))  // a hung daemon: connections accepted, nothing answered
            defer { process.send(SIGCONT) }
            let observed = DraftObserving(draft.id)
            let error = await #expect(throws: PrefsError.self) { try await observed.projectedValue.loaded(timeout: .milliseconds(300)) }
            #expect(error?.code == .unavailable && error?.message.hasPrefix("Not loaded within") == true)
            #expect(observed.wrappedValue == nil)
            let thread = ThreadObserving("t")
            let waiting = Task { try await thread.projectedValue.loaded() }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
        }
    }

    @Test func loadingThrowsWhatKeepsTheSnapshotOut() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "hi"))
        try await withPrefs(client) {
            let observed = DraftObserving(draft.id)
            try await observed.projectedValue.loaded(timeout: .seconds(30))
            await daemon.expectCleanStop()
            let late = DraftObserving(draft.id)
            let error = await #expect(throws: PrefsError.self) { try await late.projectedValue.loaded(timeout: .seconds(30)) }
            #expect(error?.code == .unreachable && late.projectedValue.error == error)
            try await observed.projectedValue.loaded()  // one already in stays in
        }
    }
}

/// A one-way flag raised from any thread (an Observation callback), awaited by the test.
final class Flag: Sendable {
    private let state = Mutex<(isRaised: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func raise() {
        let waiters = state.withLock { state in
            state.isRaised = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var isRaised: Bool { state.withLock { $0.isRaised } }

    /// Returns once the flag is raised.
    func raised() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isRaised = state.withLock { state in
                if !state.isRaised { state.waiters.append(waiter) }
                return state.isRaised
            }
            if isRaised { waiter.resume() }
        }
    }
}
