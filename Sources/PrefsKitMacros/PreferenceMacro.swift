import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Preference("timeline.fontSize") var fontSize: Int = 14` inside `extension PreferenceValues`:
/// a peer key type `__PreferenceKey_fontSize` with the name and default, and the property's
/// getter and setter through `self[__PreferenceKey_fontSize.self]` — SwiftUI's `@Entry` for preferences.
///
/// Both roles check the declaration; only the peer role reports its problems, so each is reported once.
/// A declaration with problems gets no key type.
public struct PreferenceMacro: AccessorMacro, PeerMacro {
    /// The generated key type's name is this prefix and the property's name.
    static let keyTypePrefix = "__PreferenceKey_"

    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let preference = PreferenceDeclaration.check(node, on: declaration, in: context).declaration else {
            // Stand-in accessors, where they fit, keep a stored property in an extension from adding
            // errors of its own to the one the peer role reports. They are never run: the build fails.
            guard PreferenceDeclaration.canHoldAccessors(declaration) else { return [] }
            return [
                #"get { fatalError("@Preference could not expand this property; see its error") }"#,
                "set {}",
            ]
        }
        let key = preference.keyType
        return [
            "get { self[\(key).self] }",
            "set { self[\(key).self] = newValue }",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let (checked, problems) = PreferenceDeclaration.check(node, on: declaration, in: context)
        problems.forEach(context.diagnose)
        guard let preference = checked else { return [] }

        let typeAccess = preference.access.map { TokenSyntax.keyword($0).text + " " } ?? ""
        let memberAccess = preference.memberAccess.map { TokenSyntax.keyword($0).text + " " } ?? ""
        return [
            """
            \(raw: typeAccess)struct \(preference.keyType): PrefsKit.PreferenceKey {
                \(raw: memberAccess)static let name = \(preference.keyName)
                \(raw: memberAccess)static var defaultValue: \(preference.type) { \(preference.defaultValue) }
            }
            """
        ]
    }
}
