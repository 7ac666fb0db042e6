import Configuration
import PrefsKit

/// A swift-configuration provider over any ``PrefsService`` — an `EmbeddedStore`, a
/// `PostgresStore` or a `PrefsClient` of the daemon — at one prefsd scope:
/// `ConfigReader(provider: try await PrefsConfigProvider(service: prefs, scope: "/accounts/alice"))`.
///
/// - **Keys**: a config key's components joined with `.` name the prefsd key, so
///   `config.int(forKey: "timeline.fontSize")` and
///   `config.scoped(to: "timeline").int(forKey: "fontSize")` both read `timeline.fontSize`.
///   A joined name that is no prefsd key name (`Timeline.fontSize`) has no value here, so that
///   other providers of a `ConfigReader` still answer it. Key context is not used.
/// - **Scope**: the provider sees the *effective* values at its scope, resolved as prefsd
///   resolves them — override ?? lock ?? nearest scope ?? default — so a lock or an override
///   reads as the value it resolves to. swift-configuration's own scoping (`scoped(to:)`) is of
///   keys, as above; another prefsd scope is another provider.
/// - **Types**: `int`, `double` and `bool` read JSON integers, numbers and booleans that an
///   `Int` or a `Double` holds exactly, never converting one into another (but for whole numbers
///   read as doubles); `string` reads a JSON string, or any other value as its JSON text;
///   `bytes` reads a base64 string, or any other value as its JSON text's UTF-8; the array types
///   read JSON arrays of those (byte chunks as base64 strings). A value that does not map to
///   the type read is an `invalid_value` error naming the key, the scope and the source.
///
/// Reads (`value(forKey:type:)`, `snapshot()`) come from memory: the effective values are
/// loaded once, then kept current by one scoped prefsd watch (a ``PreferenceMirror``), which
/// resumes from the last revision it saw after an overflow or a daemon restart, so no change is
/// missed or applied twice. Watches (`watchValue`, `watchSnapshot`) are told by that watch too:
/// none of them polls. `fetchValue` asks the service itself.
public struct PrefsConfigProvider: ConfigProvider {
    /// The effective values at the scope, kept current.
    private let mirror: PreferenceMirror

    /// Loads the effective values at `scope`, then follows their changes.
    ///
    /// - Parameters:
    ///   - service: The service to read from.
    ///   - scope: The scope whose effective values the provider gives (`/` by default).
    /// - Throws: ``PrefsError`` when the values cannot be loaded.
    public init(service: any PrefsService, scope: ScopePath = .root) async throws {
        mirror = try await PreferenceMirror(service: service, scope: scope)
    }

    /// The prefsd scope the provider reads at.
    public var scope: ScopePath { mirror.scope }

    /// Why following prefsd's changes is interrupted, while it is (the daemon went away, the
    /// store closed): reads give the values as last seen meanwhile.
    public var failure: PrefsError? { mirror.failure }

    /// `PrefsConfigProvider[SCOPE]`.
    public var providerName: String { "PrefsConfigProvider[\(scope)]" }

    /// The prefsd key a config key names: its components joined with `.`.
    static func prefsKey(_ key: AbsoluteConfigKey) -> String {
        key.components.joined(separator: ".")
    }

    /// The effective value of `key` as last seen, as `type`.
    ///
    /// - Parameters:
    ///   - key: The config key; its components joined with `.` name the prefsd key.
    ///   - type: The type to give the value as.
    /// - Returns: The value, or none when the key has none.
    /// - Throws: ``PrefsError`` — `invalid_value` when the value does not map to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = Self.prefsKey(key)
        return LookupResult(encodedKey: name, value: try mirror.resolved(name).configValue(as: type))
    }

    /// The effective value of `key` as the service has it now, as `type`.
    ///
    /// - Parameters:
    ///   - key: The config key; its components joined with `.` name the prefsd key.
    ///   - type: The type to give the value as.
    /// - Returns: The value, or none when the key has none or is not a valid key name.
    /// - Throws: ``PrefsError`` — `invalid_value` when the value does not map to `type`, or the
    ///   service's error when it cannot answer.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        let name = Self.prefsKey(key)
        guard KeyName.isValid(name) else { return LookupResult(encodedKey: name, value: nil) }
        let resolved = try await mirror.service.resolve(name, scope: scope)
        return LookupResult(encodedKey: name, value: try resolved.configValue(as: type))
    }

    /// The effective value of `key` as `type`, then each new one, until the calling task is
    /// cancelled or `updatesHandler` returns.
    ///
    /// - Parameters:
    ///   - key: The config key; its components joined with `.` name the prefsd key.
    ///   - type: The type to give the values as.
    ///   - updatesHandler: Reads the values; each is a failure (`invalid_value`) when the value
    ///     does not map to `type`.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let name = Self.prefsKey(key)
        let feed = LatestFeed(read: { [mirror] in mirror.resolved(name) }) { $0.value == $1.value && $0.source == $1.source }
        let observation = mirror.observe(name) { _ in feed.send() }
        defer { withExtendedLifetime(observation) {} }
        feed.send()
        return try await updatesHandler(
            ConfigUpdatesAsyncSequence(
                feed.stream.map { resolved in
                    Result { LookupResult(encodedKey: name, value: try resolved.configValue(as: type)) }
                }))
    }

    /// The effective values at the scope now, fixed.
    public func snapshot() -> any ConfigSnapshot {
        PrefsConfigSnapshot(providerName: providerName, scope: scope, values: mirror.values)
    }

    /// A snapshot of the effective values, then a new one after each change, until the calling
    /// task is cancelled or `updatesHandler` returns.
    ///
    /// - Parameter updatesHandler: Reads the snapshots.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let feed = LatestFeed(read: { [mirror] in mirror.values }, repeats: ==)
        let observation = mirror.observeEveryKey { _ in feed.send() }
        defer { withExtendedLifetime(observation) {} }
        feed.send()
        let providerName = providerName
        let scope = scope
        return try await updatesHandler(
            ConfigUpdatesAsyncSequence(
                feed.stream.map { values -> any ConfigSnapshot in
                    PrefsConfigSnapshot(providerName: providerName, scope: scope, values: values)
                }))
    }
}
