import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides PrefsKit's macros.
@main
struct PrefsKitMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [PreferenceMacro.self]
}
