import Synchronization

/// The effective preferences at one scope, kept in memory and current: loaded once with
/// `list(scope:)`, then followed with one scoped watch from that revision, so nothing is missed
/// in between. Reads are a dictionary lookup under a lock — no SQL, no request — and a typed
/// read decodes a value once per change, not once per read.
///
/// ``withPrefs(_:scope:isolation:operation:)`` makes one per context; the observation wrappers
/// created inside it subscribe to it for their key. On a change, the mirror stores the new
/// value first — the context's reads give it from then on — and then tells those wrappers, each
/// of which stores it in turn before telling its own observers.
public final class PreferenceMirror: Sendable {
    /// The service followed.
    public let service: any PrefsService
    /// The scope followed.
    public let scope: ScopePath

    private struct State: ~Copyable {
        /// The keys that have an effective value (a source other than `none`).
        var values: [String: ResolvedPreference] = [:]
        /// The last typed value decoded from each key's value, until it changes.
        var decoded: [String: any Sendable] = [:]
        /// By key; under `nil`, those of every key.
        var observers: [String?: [Int: @Sendable (ResolvedPreference) -> Void]] = [:]
        var nextObserver = 0
        var failure: PrefsError?

        /// The observers of `key`'s changes: its own, and those of every key.
        func observers(of key: String) -> [@Sendable (ResolvedPreference) -> Void] {
            Array((observers[key] ?? [:]).values) + Array((observers[nil] ?? [:]).values)
        }
    }

    private let state = Mutex(State())
    private let follower = Mutex<Task<Void, Never>?>(nil)

    /// Loads the effective values at `scope`, then starts following their changes — resuming
    /// after an overflow, or a daemon restart, from the last revision seen (see ``failure``).
    ///
    /// - Parameters:
    ///   - service: The service to follow.
    ///   - scope: The scope whose effective values to keep.
    /// - Throws: ``PrefsError`` when the values cannot be loaded.
    public init(service: any PrefsService, scope: ScopePath) async throws {
        self.service = service
        self.scope = scope
        let revision = try await load()
        let task = Task { [weak self] in
            await followChanges(
                of: service, WatchRequest(scope: scope), from: revision,
                resynchronize: { [weak self] in try await self?.load() ?? revision },
                onInterruption: { [weak self] reason in self?.state.withLock { $0.failure = reason } },
                onChange: { [weak self] event in self?.apply(event) }
            )
        }
        follower.withLock { $0 = task }
    }

    /// (Re)loads every effective value at the scope, tells the observers of those that changed,
    /// and returns the revision the values are current as of.
    private func load() async throws -> Revision {
        // A list carries the revision it was read at; an empty one does not, so take the
        // revision before it: replaying from there can only repeat changes the list already has.
        let before = try await service.status().revision
        let values = try await service.list(scope: scope, prefix: nil)
        let changed = state.withLock { state in
            var loaded: [String: ResolvedPreference] = [:]
            for value in values where value.isSet { loaded[value.key] = value }
            var changed: [(ResolvedPreference, [@Sendable (ResolvedPreference) -> Void])] = []
            for key in Set(state.values.keys).union(loaded.keys) {
                let old = state.values[key]
                let new = loaded[key] ?? unset(key)
                let observers = state.observers(of: key)
                if old?.value != new.value || old?.source != new.source, !observers.isEmpty {
                    changed.append((new, observers))
                }
            }
            state.values = loaded
            state.decoded = [:]
            return changed
        }
        for (resolved, observers) in changed {
            for observer in observers { observer(resolved) }
        }
        return values.first?.revision ?? before
    }

    /// A mirror of no service: it holds no values (typed reads give the keys' defaults), follows
    /// nothing, and its ``failure`` is `error` for good.
    init(unavailable error: PrefsError, service: any PrefsService) {
        self.service = service
        self.scope = .root
        state.withLock { $0.failure = error }
    }

    deinit {
        follower.withLock { $0?.cancel() }
    }

    /// The effective value of `key` as last seen; `source: none` when it has none.
    ///
    /// - Parameter key: The key's name.
    /// - Returns: Its effective value at the mirror's scope.
    public func resolved(_ key: String) -> ResolvedPreference {
        state.withLock { state in state.values[key] ?? unset(key) }
    }

    /// Every key's effective value as last seen, by key: the keys that have one.
    public var values: [String: ResolvedPreference] {
        state.withLock { $0.values }
    }

    /// The effective value of a typed key as last seen (its default when unset), with its source.
    ///
    /// - Parameter key: The typed key.
    /// - Returns: Its value (its default when unset) and where it comes from.
    public func value<Value>(of key: TypedKey<Value>) -> (value: Value, source: PreferenceSource) {
        state.withLock { state in
            guard let resolved = state.values[key.name] else { return (key.defaultValue, .none) }
            if let decoded = state.decoded[key.name] as? Value { return (decoded, resolved.source) }
            let value = key.value(of: resolved)
            state.decoded[key.name] = value
            return (value, resolved.source)
        }
    }

    private func unset(_ key: String) -> ResolvedPreference {
        ResolvedPreference(key: key, scope: scope, value: .null, source: .none, revision: 0)
    }

    /// Why following is interrupted, while it is (the daemon went away, the store closed);
    /// nil again once it has resumed.
    public var failure: PrefsError? { state.withLock { $0.failure } }

    /// Calls `onChange` with the new effective value each time `key`'s changes.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - onChange: Called with the key's new effective value after each change.
    /// - Returns: A token to keep: the observation ends when it is released.
    public func observe(_ key: String, onChange: @escaping @Sendable (ResolvedPreference) -> Void) -> ObservationToken {
        addObserver(of: key, onChange)
    }

    /// Calls `onChange` with the new effective value of each key whose changes, in the order the
    /// changes are made; ``values`` holds the change by then.
    ///
    /// - Parameter onChange: Called with a key's new effective value after each change.
    /// - Returns: A token to keep: the observation ends when it is released.
    public func observeEveryKey(onChange: @escaping @Sendable (ResolvedPreference) -> Void) -> ObservationToken {
        addObserver(of: nil, onChange)
    }

    private func addObserver(of key: String?, _ onChange: @escaping @Sendable (ResolvedPreference) -> Void) -> ObservationToken {
        let id = state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.observers[key, default: [:]][id] = onChange
            return id
        }
        return ObservationToken { [weak self] in
            self?.state.withLock { state in _ = state.observers[key]?.removeValue(forKey: id) }
        }
    }

    private func apply(_ event: ChangeEvent) {
        guard let key = event.key else { return }
        let resolved = ResolvedPreference(
            key: key, scope: scope, value: event.value ?? .null, source: event.source ?? .none, revision: event.revision)
        let observers = state.withLock { state in
            state.values[key] = resolved.isSet ? resolved : nil
            state.decoded[key] = nil
            return state.observers(of: key)
        }
        for observer in observers { observer(resolved) }
    }
}

/// Ends an observation when released.
public final class ObservationToken: Sendable {
    private let cancel: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancel = cancel
    }

    deinit { cancel() }
}
