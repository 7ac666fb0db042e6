import SwiftDiagnostics

/// The errors `@Preference` reports, each saying what to write instead.
enum PreferenceDiagnostic: DiagnosticMessage {
    /// Attached to something other than a property.
    case notAProperty
    /// A property outside `extension PreferenceValues`.
    case outsidePreferenceValues
    /// A `static` property.
    case staticProperty
    /// `let` instead of `var`.
    case letProperty
    /// `var a = 1, b = 2`.
    case multipleBindings
    /// `var (a, b) = …`.
    case notASimpleName
    /// `var x = 3`.
    case missingType(property: String)
    /// `var x: Int`.
    case missingDefault(property: String, type: String)
    /// `var x: Int { 3 }`, `var x: Int = 3 { didSet { … } }`.
    case hasAccessors
    /// `@Preference` without the name.
    case missingName
    /// `@Preference(name)`, `@Preference("a.\(b)")`.
    case nameNotALiteral
    /// `@Preference("Timeline.x")`.
    case invalidName(name: String, problem: String)

    var message: String {
        switch self {
        case .notAProperty:
            """
            '@Preference' applies to a property: \
            'extension PreferenceValues { @Preference("timeline.fontSize") var fontSize: Int = 14 }'
            """
        case .outsidePreferenceValues:
            """
            '@Preference' declares a preference of 'PreferenceValues'; \
            move this property into 'extension PreferenceValues { … }'
            """
        case .staticProperty:
            "'@Preference' declares an instance property of 'PreferenceValues'; remove 'static'"
        case .letProperty:
            "'@Preference' needs 'var': the property is read and written"
        case .multipleBindings:
            "'@Preference' declares one property; write one '@Preference' declaration per property"
        case .notASimpleName:
            "'@Preference' needs a plain property name, not a pattern"
        case .missingType(let property):
            "'@Preference' needs the property's type: 'var \(property): Type = …'"
        case .missingDefault(let property, let type):
            "'@Preference' needs a default value: 'var \(property): \(type) = …'"
        case .hasAccessors:
            """
            '@Preference' writes the getter and setter; \
            declare a stored-style property ('var name: Type = default') without accessors
            """
        case .missingName:
            "'@Preference' needs the key's name: '@Preference(\"timeline.fontSize\")'"
        case .nameNotALiteral:
            "The key's name must be a string literal without interpolation, like '@Preference(\"timeline.fontSize\")'"
        case .invalidName(let name, let problem):
            "'\(name)' is not a valid key name: it \(problem); keys look like 'timeline.fontSize'"
        }
    }

    var diagnosticID: MessageID {
        let id =
            switch self {
            case .notAProperty: "notAProperty"
            case .outsidePreferenceValues: "outsidePreferenceValues"
            case .staticProperty: "staticProperty"
            case .letProperty: "letProperty"
            case .multipleBindings: "multipleBindings"
            case .notASimpleName: "notASimpleName"
            case .missingType: "missingType"
            case .missingDefault: "missingDefault"
            case .hasAccessors: "hasAccessors"
            case .missingName: "missingName"
            case .nameNotALiteral: "nameNotALiteral"
            case .invalidName: "invalidName"
            }
        return MessageID(domain: "PrefsKitMacros.Preference", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}
