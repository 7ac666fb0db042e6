import Observation
import Synchronization

/// A preference with an optional local value: the local value if one is set, else the effective
/// value at the context's scope. Setting it sets the local value only (nothing is stored);
/// `$property.clear()` goes back to following the scope, and `$property.set(_:)` stores a value
/// at the scope.
///
/// ```swift
/// @ScopeBacked(\.avatarStyle) var avatarStyle      // the account's style…
/// avatarStyle = .square                             // …until this view picks its own
/// ```
///
/// In an `@Observable` class, mark the property `@ObservationIgnored` (the wrapper is observable
/// itself). It takes its context as ``PreferenceObserving`` does, and reports the lack of one
/// the same way (`$property.error`); its local value works without one. Setting the local value
/// stores it, then tells observers.
@propertyWrapper
public final class ScopeBacked<Value: Codable & Sendable & Equatable>: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let tracked = SendableKeyPath(\ScopeBacked<Value>.wrappedValue)
    private let scoped: PreferenceObserving<Value>
    private let local = Mutex<Value?>(nil)
    private let forwarding = Mutex<ObservationToken?>(nil)

    /// Follows `keyPath` at the current context's scope, with no local value.
    ///
    /// - Parameter keyPath: The key's property on ``PreferenceValues``, such as `\.avatarStyle`.
    public init(_ keyPath: KeyPath<PreferenceValues, Value>) {
        scoped = PreferenceObserving(keyPath)
        followScope()
    }

    /// The local value if set, else the scope's. Observation tracks both.
    public var wrappedValue: Value {
        get {
            registrar.access(self, keyPath: tracked.keyPath)
            return local.withLock { $0 } ?? scoped.untrackedValue
        }
        set { setLocal(newValue) }
    }

    /// Where the value comes from, the updates, the scope's value, and ways to clear the local
    /// value or store one at the scope.
    public var projectedValue: Projection { Projection(wrapper: self) }

    /// Sets (or clears) the local value, then tells Observation — in that order, so an observer
    /// that reads in its change callback sees the new value.
    private func setLocal(_ value: Value?) {
        local.withLock { $0 = value }
        registrar.withMutation(of: self, keyPath: tracked.keyPath) {}
    }

    /// Re-registers, after each change of the scope's value, a tracking of it that forwards the
    /// change to this wrapper's observers while no local value hides it.
    private func followScope() {
        withObservationTracking {
            _ = scoped.wrappedValue
        } onChange: { [weak self] in
            guard let self else { return }
            if self.local.withLock({ $0 == nil }) {
                self.registrar.withMutation(of: self, keyPath: tracked.keyPath) {}
            }
            self.followScope()
        }
    }

    /// What `$property` gives.
    public struct Projection: Sendable {
        fileprivate let wrapper: ScopeBacked

        /// Whether the value is local rather than the scope's.
        public var isLocal: Bool { wrapper.local.withLock { $0 != nil } }

        /// Where the value comes from: `local`, else the scope value's source.
        public var source: PreferenceSource { isLocal ? .local : scopeSource }

        /// Where the scope's value comes from.
        public var scopeSource: PreferenceSource { wrapper.scoped.projectedValue.source }

        /// Why the scope's value is not being followed, while it is not (see
        /// ``PreferenceObserving/Projection/error``).
        public var error: PrefsError? { wrapper.scoped.projectedValue.error }

        /// The value, then each new one: local changes and, while no local value hides them,
        /// the scope's.
        public var updates: AsyncStream<Value> {
            let wrapper = wrapper
            return observationUpdates { wrapper.wrappedValue }
        }

        /// Drops the local value: the property follows the scope again.
        public func clear() {
            wrapper.setLocal(nil)
        }

        /// Stores `value` at the context's scope (a local value, if set, still wins here).
        ///
        /// - Parameter value: The key's new value at the scope.
        /// - Throws: ``PrefsError``, as ``PreferenceObserving/Projection/set(_:)`` does.
        public func set(_ value: Value) async throws {
            try await wrapper.scoped.projectedValue.set(value)
        }
    }
}

/// Holds either a local object or reads it from the prefs context: ``ScopeBacked`` for objects
/// (a service, a scope) rather than single preference values.
///
/// ```swift
/// @ScopeOrLocal(\.service) var prefs                 // the context's service…
/// @ScopeOrLocal(wrappedValue: testStore) var prefs   // …or a given one
/// ```
///
/// It reads the context where the property is read (the enclosing `withPrefs`'s, else the
/// process-wide ``PrefsContext/default``), as `@Environment` does. Where there is none, it reads
/// a stand-in context at `/` whose service throws ``PrefsContext/missingError`` from every call.
@propertyWrapper
public struct ScopeOrLocal<Value: Sendable>: Sendable {
    private let local: Value?
    private let read: @Sendable (PrefsContext) -> Value

    /// Reads the context's value at `keyPath` (the context of the task that reads it).
    ///
    /// - Parameter keyPath: The property of ``PrefsContext`` to read, such as `\.service`.
    public init(_ keyPath: any KeyPath<PrefsContext, Value> & Sendable) {
        local = nil
        read = { $0[keyPath: keyPath] }
    }

    /// A local value, whatever the context.
    ///
    /// - Parameter wrappedValue: The value to hold.
    public init(wrappedValue: Value) {
        local = wrappedValue
        read = { _ in wrappedValue }
    }

    /// The local value, else the current context's.
    public var wrappedValue: Value {
        local ?? read(PrefsContext.current ?? .missing)
    }

    /// Whether the value is local.
    public var projectedValue: Bool { local != nil }
}
