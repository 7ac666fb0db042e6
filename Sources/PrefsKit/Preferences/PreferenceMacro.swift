/// Declares a preference in one line — SwiftUI's `@Entry` for ``PreferenceValues``.
///
/// ```swift
/// extension PreferenceValues {
///     @Preference("timeline.statusContentMode") var statusContentMode: StatusContentMode = .collapsed
/// }
/// ```
///
/// is the same as declaring by hand
///
/// ```swift
/// extension PreferenceValues {
///     struct __PreferenceKey_statusContentMode: PreferenceKey {
///         static let name = "timeline.statusContentMode"
///         static var defaultValue: StatusContentMode { .collapsed }
///     }
///     var statusContentMode: StatusContentMode {
///         get { self[__PreferenceKey_statusContentMode.self] }
///         set { self[__PreferenceKey_statusContentMode.self] = newValue }
///     }
/// }
/// ```
///
/// The property needs a type and a default (an optional type defaults to `nil`); the name must be a
/// string literal and a valid key name (see ``KeyName``). The default is evaluated on each read of
/// an unset key, like a computed property. The key type takes the property's access level.
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(__PreferenceKey_))
public macro Preference(_ name: String) = #externalMacro(module: "PrefsKitMacros", type: "PreferenceMacro")
