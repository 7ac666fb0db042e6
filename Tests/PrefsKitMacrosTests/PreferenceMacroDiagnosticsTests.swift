import PrefsKitMacros
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every error `@Preference` reports. A declaration with a problem gets no key type; where it can
/// hold accessors it gets stand-ins, so the macro's error is the only one the developer sees.
@Suite("@Preference diagnostics")
struct PreferenceMacroDiagnosticsTests {
    /// A `var name: Type` with problems, expanded: the stand-in accessors that spare it the
    /// compiler's own errors about a stored property the macro did not make computed.
    private func standIn(_ declaration: String, indent: String = "    ") -> String {
        """
        \(indent)\(declaration) {
        \(indent)    get {
        \(indent)        fatalError("@Preference could not expand this property; see its error")
        \(indent)    }
        \(indent)    set {
        \(indent)    }
        \(indent)}
        """
    }

    @Test("On something other than a property")
    func notAProperty() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") func fontSize() -> Int { 14 }
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    func fontSize() -> Int { 14 }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'@Preference' applies to a property: 'extension PreferenceValues { @Preference("timeline.fontSize") var fontSize: Int = 14 }'"#,
                    line: 2,
                    column: 5
                )
            ]
        )
    }

    @Test("In a struct, at the top level or in another type's extension: it belongs in extension PreferenceValues")
    func outsidePreferenceValues() {
        let message =
            "'@Preference' declares a preference of 'PreferenceValues'; move this property into 'extension PreferenceValues { … }'"
        assertPreferenceExpansion(
            """
            struct Settings {
                @Preference("timeline.fontSize") var fontSize: Int = 14
            }
            @Preference("timeline.fontSize") var fontSize: Int = 14
            extension EnvironmentValues {
                @Preference("timeline.fontSize") var fontSize: Int = 14
            }
            """,
            expandedSource: """
                struct Settings {
                \(standIn("var fontSize: Int"))
                }
                \(standIn("var fontSize: Int", indent: ""))
                extension EnvironmentValues {
                \(standIn("var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: message, line: 2, column: 5),
                DiagnosticSpec(message: message, line: 4, column: 1),
                DiagnosticSpec(message: message, line: 6, column: 5),
            ]
        )
    }

    @Test("A static property, with a fix-it that removes 'static'")
    func staticProperty() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") static var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("static var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' declares an instance property of 'PreferenceValues'; remove 'static'",
                    line: 2,
                    column: 38,
                    fixIts: [FixItSpec(message: "Remove 'static'")]
                )
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: Int = 14
                }
                """
        )
    }

    @Test("A let, with a fix-it that makes it a var")
    func letProperty() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") let fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    let fontSize: Int = 14
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' needs 'var': the property is read and written",
                    line: 2,
                    column: 38,
                    fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]
                )
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: Int = 14
                }
                """
        )
    }

    /// The compiler refuses an attached accessor or peer macro on `var a = 1, b = 2` itself, before
    /// expanding (as `assertMacroExpansion` does), so this calls the macro directly.
    @Test("More than one binding")
    func multipleBindings() throws {
        let file = Parser.parse(
            source: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: Int = 14, lineSpacing: Int = 2
                }
                """
        )
        let extensionDecl = try #require(file.statements.first?.item.as(ExtensionDeclSyntax.self))
        let variable = try #require(extensionDecl.memberBlock.members.first?.decl.as(VariableDeclSyntax.self))
        let attribute = try #require(variable.attributes.first?.as(AttributeSyntax.self))
        let context = BasicMacroExpansionContext(lexicalContext: [Syntax(extensionDecl)])

        let peers = try PreferenceMacro.expansion(of: attribute, providingPeersOf: variable, in: context)
        let accessors = try PreferenceMacro.expansion(of: attribute, providingAccessorsOf: variable, in: context)

        #expect(peers.isEmpty)
        #expect(accessors.isEmpty)
        #expect(
            context.diagnostics.map(\.message) == [
                "'@Preference' declares one property; write one '@Preference' declaration per property"
            ]
        )
        #expect(context.diagnostics.first?.node.trimmedDescription == "lineSpacing: Int = 2")
    }

    @Test("A pattern instead of a name")
    func pattern() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.size") var (width, height): (Int, Int) = (1, 2)
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var (width, height): (Int, Int) = (1, 2)
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "'@Preference' needs a plain property name, not a pattern", line: 2, column: 38)
            ]
        )
    }

    @Test("No type annotation, with a fix-it that adds a placeholder")
    func missingType() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var fontSize = 14
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' needs the property's type: 'var fontSize: Type = …'",
                    line: 2,
                    column: 42,
                    fixIts: [FixItSpec(message: "Add a type annotation")]
                )
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: <#Type#> = 14
                }
                """
        )
    }

    @Test("No default value, with a fix-it that adds a placeholder")
    func missingDefault() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize: Int
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' needs a default value: 'var fontSize: Int = …'",
                    line: 2,
                    column: 42,
                    fixIts: [FixItSpec(message: "Add a default value")]
                )
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: Int = <#default#>
                }
                """
        )
    }

    @Test("Neither type nor default: both are reported")
    func missingTypeAndDefault() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var fontSize
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' needs the property's type: 'var fontSize: Type = …'",
                    line: 2,
                    column: 42,
                    fixIts: [FixItSpec(message: "Add a type annotation")]
                ),
                DiagnosticSpec(
                    message: "'@Preference' needs a default value: 'var fontSize: Type = …'",
                    line: 2,
                    column: 42,
                    fixIts: [FixItSpec(message: "Add a default value")]
                ),
            ]
        )
    }

    @Test("Accessors of its own")
    func accessors() {
        let message =
            "'@Preference' writes the getter and setter; declare a stored-style property ('var name: Type = default') without accessors"
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize: Int { 14 }
                @Preference("timeline.lineSpacing") var lineSpacing: Int = 2 { didSet {} }
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var fontSize: Int { 14 }
                    var lineSpacing: Int = 2 { didSet {} }
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: message, line: 2, column: 56),
                DiagnosticSpec(message: message, line: 3, column: 66),
            ]
        )
    }

    @Test("No name")
    func missingName() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'@Preference' needs the key's name: '@Preference("timeline.fontSize")'"#,
                    line: 2,
                    column: 5
                )
            ]
        )
    }

    @Test("A name that is not a string literal, or interpolates")
    func nameNotALiteral() {
        let message = #"The key's name must be a string literal without interpolation, like '@Preference("timeline.fontSize")'"#
        assertPreferenceExpansion(
            #"""
            extension PreferenceValues {
                @Preference(fontSizeKey) var fontSize: Int = 14
                @Preference("timeline.\(part)") var lineSpacing: Int = 2
            }
            """#,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("var fontSize: Int"))
                \(standIn("var lineSpacing: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: message, line: 2, column: 17),
                DiagnosticSpec(message: message, line: 3, column: 17),
            ]
        )
    }

    @Test(
        "An invalid key name, with the reason",
        arguments: [
            ("", "is empty"),
            ("1timeline", "must start with a lowercase letter (a-z)"),
            ("timeline..fontSize", "has an empty part between dots"),
            ("timeline.", "ends with a dot"),
            ("timeline.font size", "may contain only letters, digits, '_', '-' and '.' between parts"),
            ("timeline/fontSize", "may contain only letters, digits, '_', '-' and '.' between parts"),
            ("a." + String(repeating: "x", count: 255), "is 257 bytes long; the limit is 256"),
        ]
    )
    func invalidName(name: String, problem: String) {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("\(name)") var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'\(name)' is not a valid key name: it \(problem); keys look like 'timeline.fontSize'",
                    line: 2,
                    column: 17
                )
            ]
        )
    }

    @Test("A name of 256 bytes is valid")
    func longestName() {
        let name = "a." + String(repeating: "x", count: 254)
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("\(name)") var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var fontSize: Int {
                        get {
                            self[__PreferenceKey_fontSize.self]
                        }
                        set {
                            self[__PreferenceKey_fontSize.self] = newValue
                        }
                    }

                    struct __PreferenceKey_fontSize: PrefsKit.PreferenceKey {
                        static let name = "\(name)"
                        static var defaultValue: Int {
                            14
                        }
                    }
                }
                """
        )
    }

    @Test("A name starting with a capital, with a fix-it that lowercases it")
    func capitalizedName() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("Timeline.fontSize") var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                \(standIn("var fontSize: Int"))
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'Timeline.fontSize' is not a valid key name: it must start with a lowercase letter (a-z); keys look like 'timeline.fontSize'",
                    line: 2,
                    column: 17,
                    fixIts: [FixItSpec(message: "Use 'timeline.fontSize'")]
                )
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: Int = 14
                }
                """
        )
    }

    @Test("Several problems at once are all reported, with all their fix-its")
    func severalProblems() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("Timeline.fontSize") static let fontSize = 14
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    static let fontSize = 14
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Preference' declares an instance property of 'PreferenceValues'; remove 'static'",
                    line: 2,
                    column: 38,
                    fixIts: [FixItSpec(message: "Remove 'static'")]
                ),
                DiagnosticSpec(
                    message: "'@Preference' needs 'var': the property is read and written",
                    line: 2,
                    column: 45,
                    fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]
                ),
                DiagnosticSpec(
                    message: "'@Preference' needs the property's type: 'var fontSize: Type = …'",
                    line: 2,
                    column: 49,
                    fixIts: [FixItSpec(message: "Add a type annotation")]
                ),
                DiagnosticSpec(
                    message:
                        "'Timeline.fontSize' is not a valid key name: it must start with a lowercase letter (a-z); keys look like 'timeline.fontSize'",
                    line: 2,
                    column: 17,
                    fixIts: [FixItSpec(message: "Use 'timeline.fontSize'")]
                ),
            ],
            fixedSource: """
                extension PreferenceValues {
                    @Preference("timeline.fontSize") var fontSize: <#Type#> = 14
                }
                """
        )
    }
}
