import PrefsKit

/// The answer of `GET /v1/prefs`.
struct PreferenceList: Codable, Sendable {
    var scope: ScopePath
    var preferences: [ResolvedPreference]
}
