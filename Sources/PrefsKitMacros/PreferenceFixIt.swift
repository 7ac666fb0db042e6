import SwiftDiagnostics

/// The fix-its `@Preference` offers with its errors.
enum PreferenceFixIt: FixItMessage {
    /// Replace `let` with `var`.
    case useVar
    /// Delete `static`.
    case removeStatic
    /// Insert `: <#Type#>`.
    case addType
    /// Insert `= <#default#>`.
    case addDefault
    /// Replace the name with a corrected one.
    case useName(String)

    var message: String {
        switch self {
        case .useVar: "Replace 'let' with 'var'"
        case .removeStatic: "Remove 'static'"
        case .addType: "Add a type annotation"
        case .addDefault: "Add a default value"
        case .useName(let name): "Use '\(name)'"
        }
    }

    var fixItID: MessageID {
        let id =
            switch self {
            case .useVar: "useVar"
            case .removeStatic: "removeStatic"
            case .addType: "addType"
            case .addDefault: "addDefault"
            case .useName: "useName"
            }
        return MessageID(domain: "PrefsKitMacros.Preference", id: id)
    }
}
