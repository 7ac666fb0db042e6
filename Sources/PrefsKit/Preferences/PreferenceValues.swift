import Synchronization

/// Typed preference values, read and written key type by key type — the `EnvironmentValues`
/// of preferences. Extend it with one property per key (by hand or with `@Preference`); the
/// property's key path then names the key: `\.fontSize`.
///
/// A value holds the JSON of each key it was given; reading a key it has no JSON for, or JSON
/// that does not decode as the key's type, gives the key's default.
public struct PreferenceValues: Sendable {
    /// JSON by key name.
    public var json: [String: JSONValue]
    /// When set, every key read is noted here (how a key path is turned into its key).
    private let recorder: KeyRecorder?

    /// Values from JSON by key name.
    ///
    /// - Parameter json: The values' JSON, by key name (none by default).
    public init(json: [String: JSONValue] = [:]) {
        self.json = json
        self.recorder = nil
    }

    /// The value of `key`.
    ///
    /// - Parameter key: The key's type.
    public subscript<Key: PreferenceKey>(key: Key.Type) -> Key.Value {
        get {
            recorder?.note(key)
            return json[Key.name]?.decoded(as: Key.Value.self) ?? Key.defaultValue
        }
        set {
            recorder?.note(key)
            json[Key.name] = try? JSONValue(encoding: newValue)
        }
    }

    /// The key a key path reads: `PreferenceValues.key(for: \.fontSize)` is `FontSizeKey.self`.
    ///
    /// A key path that reads no ``PreferenceKey`` is a programming error, and stops the program.
    ///
    /// - Parameter keyPath: A property of ``PreferenceValues`` declared with a key.
    /// - Returns: The key it reads.
    public static func key<Value>(for keyPath: KeyPath<PreferenceValues, Value>) -> any PreferenceKey.Type {
        guard let key = recordedKey(keyPath) else {
            preconditionFailure("\(keyPath) does not read a PreferenceKey: declare it with self[SomeKey.self] or @Preference.")
        }
        return key
    }

    /// The key a key path of any value type reads (`\.fontSize` in `[\.fontSize, \.mode]`).
    ///
    /// - Parameter keyPath: A property of ``PreferenceValues``.
    /// - Returns: The key it reads.
    /// - Throws: ``PrefsError`` — `invalid_key` for a key path that reads none.
    public static func key(readBy keyPath: PartialKeyPath<PreferenceValues>) throws(PrefsError) -> any PreferenceKey.Type {
        guard let key = recordedKey(keyPath) else {
            throw PrefsError(
                .invalidKey, "\(keyPath) does not read a PreferenceKey: declare it with self[SomeKey.self] or @Preference.")
        }
        return key
    }

    /// The key `keyPath` reads, if it reads one.
    private static func recordedKey(_ keyPath: PartialKeyPath<PreferenceValues>) -> (any PreferenceKey.Type)? {
        let recorder = KeyRecorder()
        _ = PreferenceValues(recorder: recorder)[keyPath: keyPath]
        return recorder.key
    }

    private init(recorder: KeyRecorder) {
        self.json = [:]
        self.recorder = recorder
    }
}

/// Notes the last key a ``PreferenceValues`` read.
private final class KeyRecorder: Sendable {
    private let noted = Mutex<(any PreferenceKey.Type)?>(nil)
    func note(_ key: any PreferenceKey.Type) { noted.withLock { $0 = key } }
    var key: (any PreferenceKey.Type)? { noted.withLock { $0 } }
}

/// A typed key as a plain value: its name and default, taken once from a key path, so it can
/// cross tasks (key paths are not `Sendable`).
public struct TypedKey<Value: Codable & Sendable & Equatable>: Sendable, Equatable {
    /// The key's name.
    public let name: String
    /// The key's default.
    public let defaultValue: Value

    /// The key `keyPath` reads. Each key path is looked up once, then remembered.
    ///
    /// - Parameter keyPath: A property of ``PreferenceValues`` declared with a key, such as
    ///   `\.fontSize`.
    public init(_ keyPath: KeyPath<PreferenceValues, Value>) {
        let id = SendableKeyPath<AnyKeyPath>(keyPath)
        let known = knownKeyPaths.withLock { $0[id] }
        if let known, let defaultValue = known.defaultValue as? Value {
            self.init(name: known.name, defaultValue: defaultValue)
            return
        }
        self.init(name: PreferenceValues.key(for: keyPath).name, defaultValue: PreferenceValues()[keyPath: keyPath])
        let learned = (name: name, defaultValue: defaultValue as any Sendable)
        knownKeyPaths.withLock { $0[id] = learned }
    }

    private init(name: String, defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }

    /// The value a resolution gives: its JSON decoded, else the default.
    ///
    /// - Parameter resolved: The key's resolved value.
    /// - Returns: Its value as the key's type; the key's default when it is unset or does not
    ///   decode as that type.
    public func value(of resolved: ResolvedPreference) -> Value {
        resolved.isSet ? value(of: resolved.value) : defaultValue
    }

    /// JSON decoded as the key's type, else the default.
    ///
    /// - Parameter json: The JSON, or nil.
    /// - Returns: The JSON as the key's type; the key's default when it is nil or does not
    ///   decode as that type.
    public func value(of json: JSONValue?) -> Value {
        json?.decoded(as: Value.self) ?? defaultValue
    }
}

/// Key paths already turned into keys (see ``TypedKey/init(_:)``): a key's name and default
/// never change, so looking one up again is a dictionary read.
private let knownKeyPaths = Mutex<[SendableKeyPath<AnyKeyPath>: (name: String, defaultValue: any Sendable)]>([:])

