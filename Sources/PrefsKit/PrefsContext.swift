/// Where preference reads and wrappers find their service and scope — the `EnvironmentValues`
/// of prefsd, carried by a task local. Set it with ``withPrefs(_:scope:operation:)``; nested
/// calls narrow the scope.
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

    /// The context of the running task, if any.
    @TaskLocal public static var current: PrefsContext?

    /// The context of the running task; a programming error outside ``withPrefs(_:scope:operation:)``.
    public static var required: PrefsContext {
        guard let current else {
            preconditionFailure("No prefs context: create preference wrappers inside withPrefs(service, scope:) { … }.")
        }
        return current
    }

    /// The effective value of a typed key here, from memory.
    public subscript<Value: Codable & Sendable & Equatable>(keyPath: KeyPath<PreferenceValues, Value>) -> Value {
        value(of: TypedKey(keyPath)).value
    }

    /// The effective value of a typed key here, with where it came from.
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
/// ```swift
/// try await withPrefs(store, scope: "/accounts/alice") {
///     let model = TimelineModel()            // its @PreferenceObserving wrappers resolve at alice
///     try await withPrefs(scope: "threads/42") { … }   // narrower: /accounts/alice/threads/42
/// }
/// ```
public func withPrefs<Result>(
    _ service: any PrefsService, scope: ScopePath = .root, operation: () async throws -> Result
) async throws -> Result {
    try await withContext(service, scope: scope, localValues: [:], operation: operation)
}

/// Runs `operation` in a new context at `scope`, with its mirror loaded.
private func withContext<Result>(
    _ service: any PrefsService, scope: ScopePath, localValues: [String: any Sendable],
    operation: () async throws -> Result
) async throws -> Result {
    let mirror = try await PreferenceMirror(service: service, scope: scope)
    let context = PrefsContext(service: service, scope: scope, mirror: mirror, localValues: localValues)
    return try await PrefsContext.$current.withValue(context) { try await operation() }
}

/// Narrows the current context: `scope` is a path below the current scope (`threads/42`), or an
/// absolute one inside it; values given to the context stay. Throws `invalid_scope` outside any context or for a scope outside it.
public func withPrefs<Result>(scope: String, operation: () async throws -> Result) async throws -> Result {
    guard let outer = PrefsContext.current else {
        throw PrefsError(.invalidScope, "withPrefs(scope:) narrows a context; start one with withPrefs(service, scope:).")
    }
    let narrowed = try scope.hasPrefix("/") ? ScopePath(scope) : ScopePath(outer.scope.isRoot ? "/" + scope : outer.scope.path + "/" + scope)
    guard outer.scope.contains(narrowed) else {
        throw PrefsError(.invalidScope, "\(narrowed.path) is not inside the enclosing scope \(outer.scope.path).")
    }
    return try await withContext(outer.service, scope: narrowed, localValues: outer.localValues, operation: operation)
}

/// Runs `operation` with `value` as the key's value in the current context — for the code
/// inside, reads and wrappers created there see it (source `local`) whatever the scope holds,
/// like `.environment(\.key, value)` down a view tree. Nothing is stored. Throws
/// `invalid_scope` outside any context.
///
/// ```swift
/// try await withPrefs(\.statusContentMode, .expanded) {
///     TimelineModel().mode        // .expanded, source .local
/// }
/// ```
public func withPrefs<Value: Codable & Sendable & Equatable, Result>(
    _ keyPath: WritableKeyPath<PreferenceValues, Value>, _ value: Value, operation: () async throws -> Result
) async throws -> Result {
    guard var context = PrefsContext.current else {
        throw PrefsError(.invalidScope, "withPrefs(\\.key, value) sets a value in a context; start one with withPrefs(service, scope:).")
    }
    context.localValues[TypedKey(keyPath).name] = value
    return try await PrefsContext.$current.withValue(context) { try await operation() }
}
