import Foundation
import Observation
import PrefsClient
import PrefsEngine
import PrefsKit
import PrefsPostgres
import PrefsStore
import Synchronization
import TestHarness
import Testing

enum StatusMode: String, Codable, CaseIterable, Sendable {
    case collapsed, expanded
}

struct StatusModeKey: PreferenceKey {
    static let name = "timeline.statusMode"
    static let defaultValue = StatusMode.collapsed
}

struct FontSizeKey: PreferenceKey {
    static let name = "timeline.fontSize"
    static let defaultValue = 14
}

extension PreferenceValues {
    var statusMode: StatusMode {
        get { self[StatusModeKey.self] }
        set { self[StatusModeKey.self] = newValue }
    }
    var fontSize: Int {
        get { self[FontSizeKey.self] }
        set { self[FontSizeKey.self] = newValue }
    }
}

/// A model as an application writes one. Not Sendable: wrapper storage is `var`. The tests read
/// it from Observation callbacks, which is sound because the wrappers are Sendable and the
/// model's storage is never reassigned after init.
final class TimelineModel {
    @PreferenceObserving(\.statusMode) var mode
    @ScopeBacked(\.fontSize) var fontSize
}

/// Counts the Observation change callbacks of one read, re-tracking after each.
final class ChangeCounter: Sendable {
    private let count = Mutex(0)
    private let read: @Sendable () -> Void

    init(_ read: @escaping @Sendable () -> Void) {
        self.read = read
        track()
    }

    /// The callbacks so far.
    var changes: Int { count.withLock { $0 } }

    /// The callbacks once at least `expected` have come — or after a minute, so a missing one fails
    /// the expectation that follows instead of hanging the run. Extra callbacks from earlier
    /// changes cannot arrive later: changes are delivered in order.
    func changes(atLeast expected: Int) async -> Int {
        try? await waitUntil("\(expected) changes", interval: .milliseconds(1)) { changes >= expected }
        return changes
    }

    private func track() {
        withObservationTracking(read) { [weak self] in
            self?.count.withLock { $0 += 1 }
            self?.track()
        }
    }
}

/// Reads `stream` until `matches` holds.
func next<T: Sendable>(_ stream: AsyncStream<T>, where matches: (T) -> Bool) async -> T? {
    for await value in stream where matches(value) { return value }
    return nil
}

/// The two implementations every wrapper test runs against.
/// The services the conformance suites run on: SQLite embedded and behind a daemon, and — where
/// a PostgreSQL server is given (always in CI) — PostgreSQL embedded and behind a daemon.
enum Backend: String, CaseIterable, Sendable {
    case embedded, daemon, postgres, daemonOnPostgres

    static var allCases: [Backend] {
        [.embedded, .daemon] + (PostgresTestDatabase.isEnabled ? [.postgres, .daemonOnPostgres] : [])
    }

    /// Runs `body` with a fresh service of this kind, in the caller's isolation.
    func run(isolation: isolated (any Actor)? = #isolation, _ body: (any PrefsService) async throws -> Void) async throws {
        switch self {
        case .embedded:
            try await withStore(EmbeddedStore.temporary()) { store in try await body(store) }
        case .daemon:
            let daemon = try await Daemon()
            try await body(daemon.client)
        case .postgres:
            try await withPostgresDatabase { database in
                try await withStore(PostgresStore(url: database.url)) { store in try await body(store) }
            }
        case .daemonOnPostgres:
            try await Daemon.onPostgres { daemon in try await body(daemon.client) }
        }
    }
}

@Suite struct WrapperTests {
    @Test(arguments: Backend.allCases)
    func preferenceObservingUpdatesOnlyOnItsEffectiveValue(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.register(keys: [StatusModeKey.self, FontSizeKey.self])
            try await withPrefs(service, scope: "/accounts/alice") {
                nonisolated(unsafe) let model = TimelineModel()
                #expect(model.mode == .collapsed)
                #expect(model.$mode.source == .default)
                let counter = ChangeCounter { _ = model.mode }
                let updates = model.$mode.updates

                try await service.set(\.fontSize, 20)  // another key
                try await service.set(\.statusMode, .expanded, scope: "/accounts/alice")
                #expect(await next(updates) { $0 == .expanded } == .expanded)
                #expect(await counter.changes(atLeast: 1) == 1)
                #expect(model.$mode.source == .scope("/accounts/alice"))

                try await service.set(\.statusMode, .collapsed)  // at /: hidden by alice's value
                try await service.set(\.statusMode, .expanded, scope: "/accounts/bob")  // another scope
                try await model.$mode.set(.collapsed)  // the marker, through the wrapper's setter
                #expect(await next(updates) { $0 == .collapsed } == .collapsed)
                #expect(await counter.changes(atLeast: 2) == 2)

                try await model.$mode.reset()  // back to / : collapsed — same value, no change
                try await service.set(\.statusMode, .expanded)  // now it shows through
                #expect(await next(updates) { $0 == .expanded } == .expanded)
                #expect(await counter.changes(atLeast: 3) == 3)
                #expect(model.$mode.source == .scope("/"))
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func scopeBackedPrefersItsLocalValue(_ backend: Backend) async throws {
        try await backend.run { service in
            try await withPrefs(service, scope: "/accounts/alice") {
                nonisolated(unsafe) let model = TimelineModel()
                let counter = ChangeCounter { _ = model.fontSize }
                let scoped = PreferenceObserving(\.fontSize)
                let updates = scoped.projectedValue.updates
                #expect(model.fontSize == 14)
                try await service.set(\.fontSize, 16, scope: "/accounts")
                _ = await next(updates) { $0 == 16 }
                #expect(model.fontSize == 16)
                #expect(await counter.changes(atLeast: 1) == 1)
                #expect(!model.$fontSize.isLocal)

                var values = model.$fontSize.updates.makeAsyncIterator()
                #expect(await values.next() == 16)
                model.fontSize = 30
                #expect(await values.next() == 30)  // the new value, not the one it replaced
                #expect(await counter.changes(atLeast: 2) == 2)
                #expect(model.$fontSize.isLocal && model.fontSize == 30)
                #expect(model.$fontSize.source == .local)
                try await service.set(\.fontSize, 18, scope: "/accounts")  // hidden by the local value
                _ = await next(updates) { $0 == 18 }
                #expect(await counter.changes(atLeast: 2) == 2)
                model.$fontSize.clear()
                #expect(model.fontSize == 18)
                #expect(await counter.changes(atLeast: 3) == 3)
                #expect(model.$fontSize.source == .scope("/accounts"))

                try await model.$fontSize.set(22)  // stored at the context's scope
                _ = await next(updates) { $0 == 22 }
                #expect(model.fontSize == 22)
                #expect(model.$fontSize.source == .scope("/accounts/alice"))
                #expect(try await service.resolve(\.fontSize, scope: "/accounts/alice").value == 22)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func valuesGivenToTheContextWinForTheCodeInside(_ backend: Backend) async throws {
        try await backend.run { service in
            try await service.set(\.statusMode, .expanded, scope: "/accounts/alice")
            try await withPrefs(service, scope: "/accounts/alice") {
                #expect(try PrefsContext.required[\.statusMode] == .expanded)
                try await withPrefs(\.statusMode, .collapsed) {
                    #expect(try PrefsContext.required[\.statusMode] == .collapsed)
                    #expect(try PrefsContext.required.value(of: TypedKey(\.statusMode)).source == .local)
                    nonisolated(unsafe) let model = TimelineModel()
                    let counter = ChangeCounter { _ = model.mode }
                    #expect(model.mode == .collapsed && model.$mode.source == .local)
                    let narrowed = try await withPrefs(scope: "threads/1") {  // a narrower scope keeps it
                        try PrefsContext.required[\.statusMode]
                    }
                    #expect(narrowed == .collapsed)
                    try await service.set(\.statusMode, .collapsed, scope: "/accounts/alice")
                    try await service.set(\.statusMode, .expanded, scope: "/accounts/alice")
                    // A third write, to another key, as a barrier: the context's mirror takes in
                    // changes one at a time, telling every wrapper of one before it takes in the
                    // next, so once it has this one the model has been told of both above.
                    try await service.set(\.fontSize, 31, scope: "/accounts/alice")
                    try await waitUntil("the context has the barrier write") { try PrefsContext.required[\.fontSize] == 31 }
                    #expect(model.mode == .collapsed && counter.changes == 0)
                }
                // The scope's own value, which the context's watch has taken in already.
                #expect(try PrefsContext.required[\.statusMode] == .expanded)
            }
        }
    }

    @Test func scopeOrLocalReadsTheRunningContextUnlessGivenItsOwnValue() async throws {
        struct Holder {
            @ScopeOrLocal(\.scope) var scope: ScopePath
            @ScopeOrLocal(wrappedValue: "/fixed") var fixed: ScopePath
        }
        try await withStore(EmbeddedStore.temporary()) { store in
            try await withPrefs(store, scope: "/accounts/alice") {
                let holder = Holder()
                #expect(holder.scope == "/accounts/alice" && !holder.$scope)
                try await withPrefs(scope: "threads/1") {  // read where it is used, like @Environment
                    #expect(holder.scope == "/accounts/alice/threads/1")
                }
                #expect(holder.fixed == "/fixed" && holder.$fixed)
            }
        }
    }

    @Test func wrappersWorkWithObservations() async throws {
        try await withStore(EmbeddedStore.temporary()) { store in
            try await withPrefs(store, scope: "/accounts/alice") {
                nonisolated(unsafe) let model = TimelineModel()
                var modes = Observations { model.mode }.makeAsyncIterator()
                #expect(await modes.next() == .collapsed)
                try await store.set(\.statusMode, .expanded, scope: "/accounts")
                #expect(await modes.next() == .expanded)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func draftObservingFollowsTheDraftItsAttachmentsAndItsValidation(_ backend: Backend) async throws {
        try await backend.run { service in
            let draft = try await service.createDraft(DraftInput(account: "alice", text: "hello world", thread: "t"))
            let other = try await service.createDraft(DraftInput(account: "alice", text: "other", thread: "t"))
            try await withPrefs(service) {
                let observed = DraftObserving(draft.id)
                try await observed.projectedValue.loaded()
                #expect(observed.wrappedValue?.draft.text == "hello world")
                #expect(observed.wrappedValue?.validation.valid == true)
                let counter = ChangeCounter { _ = observed.wrappedValue }
                let updates = observed.projectedValue.updates

                var patch = DraftPatch()
                patch.text = .set("changed")
                _ = try await service.updateDraft(other.id, patch, ifRevision: nil)  // another draft
                try await service.set("unrelated.key", to: 1)
                _ = try await service.updateDraft(draft.id, patch, ifRevision: nil)
                _ = await next(updates) { $0?.draft.text == "changed" }
                #expect(await counter.changes(atLeast: 1) == 1)

                let bytes = AsyncThrowingStream<Data, any Error> { $0.yield(Data("png".utf8)); $0.finish() }
                _ = try await service.addAttachment(to: draft.id, AttachmentUpload(filename: "a.png"), ifRevision: nil, bytes: bytes)
                _ = await next(updates) { $0?.draft.attachments.count == 1 }
                #expect(await counter.changes(atLeast: 2) == 2)

                try await service.set(ComposeRules.requireAltTextKey, to: true, scope: "/accounts/alice")
                let invalid = await next(updates) { $0?.validation.valid == false }
                #expect(invalid??.validation.problems.map(\.code) == ["missing_alt_text"])
                #expect(await counter.changes(atLeast: 3) == 3)

                try await service.deleteDraft(draft.id, ifRevision: nil)
                _ = await next(updates) { $0 == nil }
                #expect(await counter.changes(atLeast: 4) == 4)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func threadObservingFollowsEveryDraftOfTheThreadInOrder(_ backend: Backend) async throws {
        try await backend.run { service in
            let first = try await service.createDraft(DraftInput(account: "alice", text: "one", thread: "t"))
            _ = try await service.createDraft(DraftInput(account: "alice", text: "two", thread: "t"))
            try await withPrefs(service) {
                let thread = ThreadObserving("t")
                try await thread.projectedValue.loaded()
                #expect(thread.wrappedValue.map(\.draft.text) == ["one", "two"])
                let counter = ChangeCounter { _ = thread.wrappedValue }
                let updates = thread.projectedValue.updates

                _ = try await service.createDraft(DraftInput(account: "alice", text: "elsewhere", thread: "u"))
                var patch = DraftPatch()
                patch.position = .set(1)
                _ = try await service.updateDraft(first.id, patch, ifRevision: nil)
                _ = await next(updates) { $0.map(\.draft.text) == ["two", "one"] }
                // The move changes both drafts in one transaction: two events, but the first re-fetch
                // already sees the final order and the second finds nothing new.
                #expect(await counter.changes(atLeast: 1) == 1)
                let before = 1
                _ = try await service.createDraft(DraftInput(account: "alice", text: "three", thread: "t"))
                _ = await next(updates) { $0.count == 3 }
                #expect(await counter.changes(atLeast: before + 1) == before + 1)
            }
        }
    }

    @Test func contextsNestAndNarrowTheScope() async throws {
        try await withStore(EmbeddedStore.temporary()) { store in
            try await store.set(\.fontSize, 12, scope: "/accounts")
            try await store.set(\.fontSize, 16, scope: "/accounts/alice/threads/42")
            try await withPrefs(store, scope: "/accounts") {
                #expect(PrefsContext.current?.scope == "/accounts")
                #expect(try PrefsContext.required[\.fontSize] == 12)
                try await withPrefs(scope: "alice/threads/42") {
                    #expect(PrefsContext.current?.scope == "/accounts/alice/threads/42")
                    let (value, source) = try PrefsContext.required.value(of: TypedKey(\.fontSize))
                    #expect(value == 16 && source == .scope("/accounts/alice/threads/42"))
                }
                let bob = try await withPrefs(scope: "/accounts/bob") { try PrefsContext.required.value(of: TypedKey(\.fontSize)) }
                #expect(bob.value == 12 && bob.source == .scope("/accounts"))
                await #expect(throws: PrefsError.self) { try await withPrefs(scope: "/elsewhere") {} }
                #expect(PrefsContext.current?.scope == "/accounts")
            }
            let typed = try await store.resolve(\.fontSize, scope: "/accounts/bob")
            #expect(typed.value == 12 && typed.source == .scope("/accounts"))
            #expect(try await store.schemas().isEmpty)
            try await store.register(keys: [StatusModeKey.self])
            #expect(try await store.schemas()["timeline.statusMode"]?.choices == ["collapsed", "expanded"])
        }
    }
}
