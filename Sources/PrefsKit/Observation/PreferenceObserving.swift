import Observation
import Synchronization

/// A property that follows one preference's effective value at the context's scope, and tells
/// Observation only when that value changes — not when another key changes, nor when a change
/// is hidden by a nearer scope, a lock or an override. A value given to the context with
/// ``withPrefs(_:_:isolation:operation:)`` wins, and then never changes.
///
/// ```swift
/// @MainActor @Observable final class TimelineModel {
///     @ObservationIgnored @PreferenceObserving(\.statusContentMode) var mode
/// }
/// try await withPrefs(store, scope: "/accounts/alice") {
///     let model = TimelineModel()
///     withObservationTracking { _ = model.mode } onChange: { … }   // fires on mode changes only
///     try await model.$mode.set(.expanded)                           // writes at /accounts/alice
/// }
/// ```
///
/// In an `@Observable` class, mark the property `@ObservationIgnored`: the `Observable` macro
/// cannot host a property wrapper, and needs not — the wrapper is observable itself, so reading
/// the property still registers the dependency on this key.
///
/// It takes the context where it is created: the enclosing
/// ``withPrefs(_:scope:isolation:operation:)``'s, else the process-wide
/// ``PrefsContext/default``. Where there is neither, it holds the key's default, its setters
/// throw, and `$property.error` says how to give it a context.
///
/// Reads come from memory: the context's ``PreferenceMirror``. When the key's effective value
/// changes, the mirror stores it first (so the context's own reads, `PrefsContext.current?[\.key]`,
/// give it from then on), then tells its wrappers; each stores the new value, then tells its
/// observers — so an observer that reads in its change callback sees the new value. A write
/// returns before that (over the daemon, the change comes back through a watch): to act on it,
/// wait for the wrapper (`$property.updates`, Observation), not for the write.
@propertyWrapper
public final class PreferenceObserving<Value: Codable & Sendable & Equatable>: Observable, Sendable {
    @usableFromInline let registrar = ObservationRegistrar()
    @usableFromInline let tracked = SendableKeyPath(\PreferenceObserving<Value>.wrappedValue)
    private let key: TypedKey<Value>
    private let context: PrefsContext
    @usableFromInline let current: Mutex<(value: Value, source: PreferenceSource)>
    private let token = Mutex<ObservationToken?>(nil)

    /// Follows the key `keyPath` names, at the current context's scope.
    ///
    /// - Parameter keyPath: The key's property on ``PreferenceValues``, such as `\.avatarStyle`.
    public init(_ keyPath: KeyPath<PreferenceValues, Value>) {
        key = TypedKey(keyPath)
        context = PrefsContext.current ?? .missing
        current = Mutex(context.value(of: key))
        // A value given to the context hides the scope's for as long as the wrapper lives.
        guard context.localValue(of: key) == nil else { return }
        let observation = context.mirror.observe(key.name) { [weak self] resolved in
            self?.update(resolved)
        }
        token.withLock { $0 = observation }
    }

    /// The effective value. Reading it inside `withObservationTracking` tracks this key only.
    /// Inlinable, so the read is specialised for `Value` where it is made: a lock and a copy.
    @inlinable public var wrappedValue: Value {
        registrar.access(self, keyPath: tracked.keyPath)
        return current.withLock { $0.value }
    }

    /// The effective value, read without telling Observation (for wrappers built on this one).
    var untrackedValue: Value { current.withLock { $0.value } }

    /// The source, the updates, and a setter.
    public var projectedValue: Projection { Projection(wrapper: self) }

    /// Stores the new value, then tells Observation (only if the value changed).
    private func update(_ resolved: ResolvedPreference) {
        let value = key.value(of: resolved)
        let changed = current.withLock { current in
            defer { current = (value, resolved.source) }
            return current.value != value
        }
        if changed {
            registrar.withMutation(of: self, keyPath: tracked.keyPath) {}
        }
    }

    /// What `$property` gives.
    public struct Projection: Sendable {
        fileprivate let wrapper: PreferenceObserving

        /// Where the current value comes from.
        public var source: PreferenceSource { wrapper.current.withLock { $0.source } }

        /// Why the value is not being followed, while it is not: there is no context (see
        /// ``PrefsContext/missingError``), or the service went away (then the value catches up
        /// once it is back). Nil while the value is current.
        public var error: PrefsError? { wrapper.context.mirror.failure }

        /// The current value, then each new one.
        public var updates: AsyncStream<Value> {
            let wrapper = wrapper
            return observationUpdates { wrapper.wrappedValue }
        }

        /// Sets the key at the context's scope.
        ///
        /// - Parameter value: The key's new value.
        /// - Throws: ``PrefsError`` — `locked` below a lock, `invalid_value` for a value the
        ///   schema refuses; ``PrefsContext/missingError`` where there is no context.
        public func set(_ value: Value) async throws {
            try await wrapper.context.service.set(wrapper.key, value, scope: wrapper.context.scope)
        }

        /// Removes the value set at the context's scope, so the key resolves from above again.
        public func reset() async throws {
            try await wrapper.context.service.reset(wrapper.key.name, scope: wrapper.context.scope, recursive: false)
        }
    }
}
