import Foundation
import Synchronization
import PrefsKit

/// Delivers committed changes to the watches that asked for them.
///
/// Watches are indexed by what they select — exact key, key prefix, or everything — so a write
/// to one key touches only that key's watchers (and those of prefixes of it): its cost does not
/// grow with watchers of other keys. Delivery never waits: each watch has its own bounded
/// ``WatchChannel``.
final class WatchHub: Sendable {
    /// One watch: what it selects and where its events go.
    struct Subscriber: Sendable {
        let request: WatchRequest
        let channel: WatchChannel
        let overrides: [String: JSONValue]
        /// While replaying history: live changes held back until the replay has caught up.
        var held: [CommittedChange]?
    }

    private struct State: ~Copyable {
        var subscribers: [Int: Subscriber] = [:]
        var byKey: [String: WatchIDs] = [:]
        var byPrefix: [String: WatchIDs] = [:]
        var byDraft: [String: WatchIDs] = [:]
        var byThread: [String: WatchIDs] = [:]
        var byAccount: [String: WatchIDs] = [:]
        var prefixLengths: [Int: Int] = [:]  // prefix length in UTF-8 bytes → how many prefixes have it
        var everything: Set<Int> = []
        var nextID = 0
        var revision: Revision
        var closed = false
    }

    private let state: Mutex<State>
    /// Whether the hub has closed, and the tasks waiting for it to (sync's long polls).
    private let closing = Mutex<(closed: Bool, waiters: [ObjectIdentifier: RevisionWaiter])>((false, [:]))

    /// How many watches may be open at once.
    let limit: Int

    init(revision: Revision, limit: Int) {
        state = Mutex(State(revision: revision))
        self.limit = limit
    }

    /// How many watches are open.
    var count: Int { state.withLock { $0.subscribers.count } }

    /// Adds a watch. Returns its id and the revision it is current as of: live changes after it
    /// are delivered (held back first if `replaying`); the caller replays those up to it.
    func subscribe(_ request: WatchRequest, channel: WatchChannel, overrides: [String: JSONValue], replaying: Bool)
        throws -> (id: Int, revision: Revision)
    {
        try state.withLock { state in
            guard !state.closed else { throw PrefsError(.shuttingDown, "The store is closing.") }
            guard state.subscribers.count < limit else {
                throw PrefsError(
                    .limitReached,
                    "\(limit) watches are open, the most allowed; close some, or raise the limit (prefsd --max-watches).")
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(
                request: request, channel: channel, overrides: overrides, held: replaying ? [] : nil)
            if let draft = request.draft {
                WatchIDs.insert(id, into: &state.byDraft, at: draft.uuidString)
            } else if let thread = request.thread {
                WatchIDs.insert(id, into: &state.byThread, at: thread)
            } else if let account = request.account {
                WatchIDs.insert(id, into: &state.byAccount, at: account)
            } else if request.keys.isEmpty && request.prefixes.isEmpty {
                state.everything.insert(id)
            }
            for key in request.keys { WatchIDs.insert(id, into: &state.byKey, at: key) }
            for prefix in request.prefixes {
                WatchIDs.insert(id, into: &state.byPrefix, at: prefix)
                state.prefixLengths[prefix.utf8.count, default: 0] += 1
            }
            return (id, state.revision)
        }
    }

    /// Ends a replay: delivers the held-back live changes, then everything as it comes.
    func goLive(_ id: Int) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id], let held = subscriber.held else { return }
            subscriber.held = nil
            state.subscribers[id] = subscriber
            for change in held { Self.deliver(change, to: subscriber) }
        }
    }

    /// Removes a watch (its watcher went away, or its channel ended).
    func unsubscribe(_ id: Int) {
        state.withLock { state in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return }
            state.everything.remove(id)
            let request = subscriber.request
            WatchIDs.remove(id, from: &state.byDraft, at: request.draft?.uuidString)
            WatchIDs.remove(id, from: &state.byThread, at: request.thread)
            WatchIDs.remove(id, from: &state.byAccount, at: request.account)
            for key in request.keys { WatchIDs.remove(id, from: &state.byKey, at: key) }
            for prefix in request.prefixes {
                WatchIDs.remove(id, from: &state.byPrefix, at: prefix)
                let length = prefix.utf8.count
                state.prefixLengths[length]! -= 1
                if state.prefixLengths[length] == 0 { state.prefixLengths[length] = nil }
            }
        }
    }

    /// Delivers a committed batch's changes, in order, to the watches that select them.
    func publish(_ changes: [CommittedChange], revision: Revision) {
        var ended: [Int] = []
        state.withLock { state in
            state.revision = revision
            for change in changes {
                for id in Self.selecting(change.event, in: state) {
                    guard var subscriber = state.subscribers[id] else { continue }
                    if subscriber.held != nil {
                        // A replay that falls a whole buffer behind the live changes ends like
                        // any slow watcher: with `overflow` at the last revision it was sent.
                        guard subscriber.held!.count < subscriber.channel.limit else {
                            subscriber.channel.overflow()
                            ended.append(id)
                            continue
                        }
                        subscriber.held!.append(change)
                        state.subscribers[id] = subscriber
                    } else if !Self.deliver(change, to: subscriber) {
                        ended.append(id)
                    }
                }
            }
        }
        for id in ended { unsubscribe(id) }
    }

    /// Sends every live watch a `progress` event with the current revision.
    func sendProgress() {
        state.withLock { state in
            let event = ChangeEvent(revision: state.revision, kind: .progress)
            for subscriber in state.subscribers.values where subscriber.held == nil {
                subscriber.channel.push(event)
            }
        }
    }

    /// Ends every watch with a final `shutdown` event, and refuses new ones; ends the waits of
    /// ``waitUntilClosed()``.
    func close() {
        let channels = state.withLock { state in
            state.closed = true
            return state.subscribers.values.map(\.channel)
        }
        let revision = state.withLock { $0.revision }
        for channel in channels { channel.finish(finalEvent: ChangeEvent(revision: revision, kind: .shutdown)) }
        let waiters = closing.withLock { closing in
            closing.closed = true
            defer { closing.waiters = [:] }
            return Array(closing.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the hub has closed: the daemon is stopping.
    var isClosed: Bool { closing.withLock { $0.closed } }

    /// Returns once the hub closes (at once if it has), or the task is cancelled: a long poll
    /// waiting for a change (a device's sync) ends then, as watches do, rather than holding the
    /// daemon's shutdown up.
    func waitUntilClosed() async {
        let waiter = RevisionWaiter(revision: 0)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.set(continuation)
                let closed = closing.withLock { closing in
                    if !closing.closed { closing.waiters[ObjectIdentifier(waiter)] = waiter }
                    return closing.closed
                }
                if closed { waiter.resume() }
            }
        } onCancel: {
            waiter.resume()
        }
        closing.withLock { _ = $0.waiters.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    /// Ends every watch opened with the named token `token`, with a final `revoked` event at
    /// `revision`, the revision that revoked it: the changes before it were delivered.
    func endWatches(of token: String, revision: Revision) {
        let ended = state.withLock { state in
            state.subscribers.filter { $0.value.request.grant?.token == token }
        }
        for (id, subscriber) in ended {
            subscriber.channel.finish(finalEvent: ChangeEvent(revision: revision, kind: .revoked))
            unsubscribe(id)
        }
    }

    /// The ids of the watches that may select `event` (``WatchFilter`` decides).
    private static func selecting(_ event: ChangeEvent, in state: borrowing State) -> Set<Int> {
        if let draft = event.draft {
            var ids: Set<Int> = []
            state.byDraft[draft]?.add(to: &ids)
            for thread in [event.thread, event.previousThread].compactMap({ $0 }) {
                state.byThread[thread]?.add(to: &ids)
            }
            if let account = event.account { state.byAccount[account]?.add(to: &ids) }
            return ids
        }
        guard let key = event.key else { return [] }
        var ids = state.everything
        state.byKey[key]?.add(to: &ids)
        if !state.prefixLengths.isEmpty {
            let bytes = key.utf8
            for length in state.prefixLengths.keys where length <= bytes.count {
                let prefix = String(decoding: bytes.prefix(length), as: UTF8.self)
                state.byPrefix[prefix]?.add(to: &ids)
            }
        }
        return ids
    }

    /// Pushes what `subscriber` should see of `change` — nothing at or before its `since`;
    /// false if its channel has ended.
    @discardableResult
    private static func deliver(_ change: CommittedChange, to subscriber: Subscriber) -> Bool {
        guard change.event.revision > subscriber.request.since ?? 0,
            let event = WatchFilter.event(for: change, request: subscriber.request, overrides: subscriber.overrides)
        else { return !subscriber.channel.isEnded }
        return subscriber.channel.push(event)
    }
}

/// What a watch sees of a change: the raw change, or — for a scoped watch — the new effective
/// value at its scope, only if that value changed.
enum WatchFilter {
    static func event(for change: CommittedChange, request: WatchRequest, overrides: [String: JSONValue]) -> ChangeEvent? {
        guard request.mayShow(change.event) else { return nil }
        if change.event.isDraftChange { return request.selects(change.event) ? change.event : nil }
        guard let key = change.event.key, request.selects(key: key) else { return nil }
        guard let scope = request.scope else { return change.event }
        let override = overrides[key]
        let before = PreferenceResolver.effectiveValue(at: scope, state: change.before ?? KeyState(), override: override)
        let after = PreferenceResolver.effectiveValue(at: scope, state: change.after ?? KeyState(), override: override)
        guard before.value != after.value else { return nil }
        var event = change.event
        event.scope = scope
        event.value = after.value
        event.source = after.source
        return event
    }
}
