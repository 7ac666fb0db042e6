import Synchronization

/// Where preference reads and wrappers find their service and scope — the `EnvironmentValues`
/// of prefsd. Code inside ``withPrefs(_:scope:isolation:operation:)`` sees that call's context
/// (nested calls narrow the scope); code outside every `withPrefs` sees the process-wide
/// ``default``, if the app set one with ``setDefault(_:scope:)``.
///
/// ```swift
/// try await PrefsContext.setDefault(PrefsClient(socketPath: socket), scope: "/accounts/alice")
/// let model = TimelineModel()          // its wrappers use the default context
/// ```
public struct PrefsContext: Sendable {
    /// The service.
    public var service: any PrefsService
    /// The scope reads resolve at.
    public var scope: ScopePath
    /// The effective values at ``scope``, in memory and current.
    public var mirror: PreferenceMirror
    /// Values given to this context itself, by key name: they win over the scope's, for the code
    /// inside, and are never stored (SwiftUI's `.environment(\.key, value)`).
    public var localValues: [String: any Sendable] = [:]
    /// Set only on ``missing``: why there is no context.
    let absence: PrefsError?

    /// A context on `service` at `scope`, its mirror loaded.
    init(loading service: any PrefsService, scope: ScopePath, localValues: [String: any Sendable] = [:]) async throws {
        self.service = service
        self.scope = scope
        self.mirror = try await PreferenceMirror(service: service, scope: scope)
        self.localValues = localValues
        self.absence = nil
    }

    private init(absence: PrefsError) {
        service = MissingContextService(error: absence)
        scope = .root
        mirror = PreferenceMirror(unavailable: absence, service: service)
        self.absence = absence
    }

    /// The context `withPrefs` sets for the code inside it.
    @TaskLocal static var bound: PrefsContext?

    /// The process-wide default (see ``setDefault(_:scope:)``).
    private static let defaultContext = Mutex<PrefsContext?>(nil)

    /// The context code running here sees: the innermost enclosing `withPrefs`'s, else the
    /// process-wide ``default``; nil where there is neither.
    public static var current: PrefsContext? { bound ?? `default` }

    /// The context code running here sees; where there is none, the error that says how to set one.
    public static var required: PrefsContext {
        get throws(PrefsError) {
            guard let current else { throw missingError }
            return current
        }
    }

    /// The context wrappers use outside every `withPrefs`, once the app has set one.
    public static var `default`: PrefsContext? { defaultContext.withLock { $0 } }

    /// Sets the process-wide default context — the service and scope that wrappers created
    /// outside every ``withPrefs(_:scope:isolation:operation:)`` use, as `@Environment` falls
    /// back on a default. Call it once at start-up, before models are made; it loads the
    /// effective values at `scope` first. A wrapper keeps the context it was created with:
    /// setting another default later changes only wrappers created after.
    ///
    /// - Parameters:
    ///   - service: The service wrappers read and write through.
    ///   - scope: The scope they resolve at (`/` by default).
    /// - Throws: ``PrefsError`` when the values at `scope` cannot be loaded; the default is then
    ///   left as it was.
    public static func setDefault(_ service: any PrefsService, scope: ScopePath = .root) async throws {
        let context = try await PrefsContext(loading: service, scope: scope)
        defaultContext.withLock { $0 = context }
    }

    /// Removes the process-wide default context: wrappers created afterwards outside every
    /// `withPrefs` report ``missingError``.
    public static func removeDefault() {
        defaultContext.withLock { $0 = nil }
    }

    /// What code outside every context gets: an error naming both ways to give it one.
    public static let missingError = PrefsError(
        .unavailable,
        "No prefs context here: create this inside withPrefs(service, scope:) { … }, "
            + "or set a process-wide default first with PrefsContext.setDefault(service, scope:).")

    /// What a wrapper created where there is no context holds: its service refuses every call
    /// with ``missingError``, and its mirror is empty, so typed reads give the keys' defaults.
    static let missing = PrefsContext(absence: missingError)

    /// The effective value of a typed key here, from memory.
    ///
    /// - Parameter keyPath: The key's property on ``PreferenceValues``, such as `\.avatarStyle`.
    public subscript<Value: Codable & Sendable & Equatable>(keyPath: KeyPath<PreferenceValues, Value>) -> Value {
        value(of: TypedKey(keyPath)).value
    }

    /// The effective value of a typed key here, with where it came from.
    ///
    /// - Parameter key: The typed key.
    /// - Returns: Its value — the one given to this context, else the scope's (its default when
    ///   unset) — and where it comes from.
    public func value<Value>(of key: TypedKey<Value>) -> (value: Value, source: PreferenceSource) {
        if let local = localValue(of: key) { return (local, .local) }
        return mirror.value(of: key)
    }

    /// The value given to this context for `key`, if any.
    func localValue<Value>(of key: TypedKey<Value>) -> Value? {
        localValues.isEmpty ? nil : localValues[key.name] as? Value
    }
}

/// Runs `operation` with `service` and `scope` as its prefs context: wrappers created inside
/// find them, like views find `EnvironmentValues`. The effective values at the scope are
/// loaded before `operation` starts and kept current while anything uses them.
///
/// `operation` runs in the caller's isolation (`#isolation`): from `@MainActor` code, a plain
/// closure that touches main-actor state, and returns what it returns.
///
/// ```swift
/// try await withPrefs(store, scope: "/accounts/alice") {
///     let model = TimelineModel()            // its @PreferenceObserving wrappers resolve at alice
///     try await withPrefs(scope: "threads/42") { … }   // narrower: /accounts/alice/threads/42
/// }
/// ```
///
/// - Parameters:
///   - service: The service the code inside reads and writes through.
///   - scope: The scope it resolves at (`/` by default).
///   - isolation: Where `operation` runs: the caller's isolation, by default.
///   - operation: The code to run in the context.
/// - Returns: What `operation` returns.
/// - Throws: ``PrefsError`` when the values at `scope` cannot be loaded, or what `operation`
///   throws.
public func withPrefs<Result>(
    _ service: any PrefsService, scope: ScopePath = .root, isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> Result
) async throws -> Result {
    let context = try await PrefsContext(loading: service, scope: scope)
    return try await PrefsContext.$bound.withValue(context, operation: operation, isolation: isolation)
}

/// Narrows the current context (the enclosing `withPrefs`'s, else the default): `scope` is a
/// path below the current scope (`threads/42`), or an absolute one inside it; values given to
/// the context stay. `operation` runs in the caller's isolation.
///
/// - Parameters:
///   - scope: A path below the current scope (`threads/42`), or an absolute one inside it.
///   - isolation: Where `operation` runs: the caller's isolation, by default.
///   - operation: The code to run in the narrower context.
/// - Returns: What `operation` returns.
/// - Throws: ``PrefsError`` — `invalid_scope` for a scope outside the current one,
///   ``PrefsContext/missingError`` where there is no context; or what `operation` throws.
public func withPrefs<Result>(
    scope: String, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> Result
) async throws -> Result {
    let outer = try PrefsContext.required
    let narrowed = try scope.hasPrefix("/") ? ScopePath(scope) : ScopePath(outer.scope.isRoot ? "/" + scope : outer.scope.path + "/" + scope)
    guard outer.scope.contains(narrowed) else {
        throw PrefsError(.invalidScope, "\(narrowed.path) is not inside the enclosing scope \(outer.scope.path).")
    }
    let context = try await PrefsContext(loading: outer.service, scope: narrowed, localValues: outer.localValues)
    return try await PrefsContext.$bound.withValue(context, operation: operation, isolation: isolation)
}

/// Runs `operation` with `value` as the key's value in the current context (the enclosing
/// `withPrefs`'s, else the default) — for the code inside, reads and wrappers created there see
/// it (source `local`) whatever the scope holds, like `.environment(\.key, value)` down a view
/// tree. Nothing is stored. `operation` runs in the caller's isolation.
///
/// ```swift
/// try await withPrefs(store, scope: "/accounts/alice") {
///     try await withPrefs(\.statusContentMode, .expanded) {
///         TimelineModel().mode        // .expanded, source .local
///     }
/// }
/// ```
///
/// - Parameters:
///   - keyPath: The key's property on ``PreferenceValues``, such as `\.statusContentMode`.
///   - value: The value the code inside sees for the key.
///   - isolation: Where `operation` runs: the caller's isolation, by default.
///   - operation: The code to run with the value.
/// - Returns: What `operation` returns.
/// - Throws: ``PrefsContext/missingError`` where there is no context, or what `operation`
///   throws.
public func withPrefs<Value: Codable & Sendable & Equatable, Result>(
    _ keyPath: WritableKeyPath<PreferenceValues, Value>, _ value: Value, isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> Result
) async throws -> Result {
    var context = try PrefsContext.required
    context.localValues[TypedKey(keyPath).name] = value
    return try await PrefsContext.$bound.withValue(context, operation: operation, isolation: isolation)
}
