import Testing

@Suite("@Preference expansion")
struct PreferenceMacroExpansionTests {
    @Test("An enum preference: a peer key type and the accessors through it")
    func enumValue() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.statusContentMode") var statusContentMode: StatusContentMode = .collapsed
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var statusContentMode: StatusContentMode {
                        get {
                            self[__PreferenceKey_statusContentMode.self]
                        }
                        set {
                            self[__PreferenceKey_statusContentMode.self] = newValue
                        }
                    }

                    struct __PreferenceKey_statusContentMode: PrefsKit.PreferenceKey {
                        static let name = "timeline.statusContentMode"
                        static var defaultValue: StatusContentMode {
                            .collapsed
                        }
                    }
                }
                """
        )
    }

    @Test("An Int preference")
    func intValue() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize: Int = 14
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
                        static let name = "timeline.fontSize"
                        static var defaultValue: Int {
                            14
                        }
                    }
                }
                """
        )
    }

    @Test("A [String] preference, among others in one extension")
    func arrayValue() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("compose.languages") var languages: [String] = ["en", "fr"]
                @Preference("compose.signature") var signature: String = ""
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var languages: [String] {
                        get {
                            self[__PreferenceKey_languages.self]
                        }
                        set {
                            self[__PreferenceKey_languages.self] = newValue
                        }
                    }

                    struct __PreferenceKey_languages: PrefsKit.PreferenceKey {
                        static let name = "compose.languages"
                        static var defaultValue: [String] {
                            ["en", "fr"]
                        }
                    }
                    var signature: String {
                        get {
                            self[__PreferenceKey_signature.self]
                        }
                        set {
                            self[__PreferenceKey_signature.self] = newValue
                        }
                    }

                    struct __PreferenceKey_signature: PrefsKit.PreferenceKey {
                        static let name = "compose.signature"
                        static var defaultValue: String {
                            ""
                        }
                    }
                }
                """
        )
    }

    @Test("An optional preference defaults to nil when it has no initial value, like a stored optional")
    func optionalWithoutDefault() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("accounts.lastUsed") var lastAccount: String?
                @Preference("accounts.limit") var accountLimit: Optional<Int>
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var lastAccount: String? {
                        get {
                            self[__PreferenceKey_lastAccount.self]
                        }
                        set {
                            self[__PreferenceKey_lastAccount.self] = newValue
                        }
                    }

                    struct __PreferenceKey_lastAccount: PrefsKit.PreferenceKey {
                        static let name = "accounts.lastUsed"
                        static var defaultValue: String? {
                            nil
                        }
                    }
                    var accountLimit: Optional<Int> {
                        get {
                            self[__PreferenceKey_accountLimit.self]
                        }
                        set {
                            self[__PreferenceKey_accountLimit.self] = newValue
                        }
                    }

                    struct __PreferenceKey_accountLimit: PrefsKit.PreferenceKey {
                        static let name = "accounts.limit"
                        static var defaultValue: Optional<Int> {
                            nil
                        }
                    }
                }
                """
        )
    }

    @Test("An optional preference with a default keeps it")
    func optionalWithDefault() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("timeline.maxLines") var maxLines: Int? = 3
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var maxLines: Int? {
                        get {
                            self[__PreferenceKey_maxLines.self]
                        }
                        set {
                            self[__PreferenceKey_maxLines.self] = newValue
                        }
                    }

                    struct __PreferenceKey_maxLines: PrefsKit.PreferenceKey {
                        static let name = "timeline.maxLines"
                        static var defaultValue: Int? {
                            3
                        }
                    }
                }
                """
        )
    }

    @Test("A public property gets a public key type with public members")
    func publicProperty() {
        assertPreferenceExpansion(
            """
            extension PrefsKit.PreferenceValues {
                @Preference("timeline.fontSize") public var fontSize: Int = 14
            }
            """,
            expandedSource: """
                extension PrefsKit.PreferenceValues {
                    public var fontSize: Int {
                        get {
                            self[__PreferenceKey_fontSize.self]
                        }
                        set {
                            self[__PreferenceKey_fontSize.self] = newValue
                        }
                    }

                    public struct __PreferenceKey_fontSize: PrefsKit.PreferenceKey {
                        public static let name = "timeline.fontSize"
                        public static var defaultValue: Int {
                            14
                        }
                    }
                }
                """
        )
    }

    @Test("In a public extension the key type is public through the extension; its members say so")
    func publicExtension() {
        assertPreferenceExpansion(
            """
            public extension PreferenceValues {
                @Preference("timeline.fontSize") var fontSize: Int = 14
            }
            """,
            expandedSource: """
                public extension PreferenceValues {
                    var fontSize: Int {
                        get {
                            self[__PreferenceKey_fontSize.self]
                        }
                        set {
                            self[__PreferenceKey_fontSize.self] = newValue
                        }
                    }

                    struct __PreferenceKey_fontSize: PrefsKit.PreferenceKey {
                        public static let name = "timeline.fontSize"
                        public static var defaultValue: Int {
                            14
                        }
                    }
                }
                """
        )
    }

    @Test("A private property gets a private key type; private(set) does not count")
    func privateProperty() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("internal.token") private var token: String = ""
                @Preference("internal.count") private(set) var count: Int = 0
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    private var token: String {
                        get {
                            self[__PreferenceKey_token.self]
                        }
                        set {
                            self[__PreferenceKey_token.self] = newValue
                        }
                    }

                    private struct __PreferenceKey_token: PrefsKit.PreferenceKey {
                        static let name = "internal.token"
                        static var defaultValue: String {
                            ""
                        }
                    }
                    private(set) var count: Int {
                        get {
                            self[__PreferenceKey_count.self]
                        }
                        set {
                            self[__PreferenceKey_count.self] = newValue
                        }
                    }

                    struct __PreferenceKey_count: PrefsKit.PreferenceKey {
                        static let name = "internal.count"
                        static var defaultValue: Int {
                            0
                        }
                    }
                }
                """
        )
    }

    @Test("A backquoted property name and a raw-string key name")
    func backquotedNameAndRawString() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference(#"compose.default"#) var `default`: Bool = true
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var `default`: Bool {
                        get {
                            self[__PreferenceKey_default.self]
                        }
                        set {
                            self[__PreferenceKey_default.self] = newValue
                        }
                    }

                    struct __PreferenceKey_default: PrefsKit.PreferenceKey {
                        static let name = #"compose.default"#
                        static var defaultValue: Bool {
                            true
                        }
                    }
                }
                """
        )
    }

    @Test("A multi-line default expression is kept as written (its inner lines keep their own indentation)")
    func complexDefault() {
        assertPreferenceExpansion(
            """
            extension PreferenceValues {
                @Preference("compose.limits") var limits: [String: Int] = Dictionary(
                    uniqueKeysWithValues: [("chars", 500)]
                )
            }
            """,
            expandedSource: """
                extension PreferenceValues {
                    var limits: [String: Int] {
                        get {
                            self[__PreferenceKey_limits.self]
                        }
                        set {
                            self[__PreferenceKey_limits.self] = newValue
                        }
                    }

                    struct __PreferenceKey_limits: PrefsKit.PreferenceKey {
                        static let name = "compose.limits"
                        static var defaultValue: [String: Int] {
                            Dictionary(
                                    uniqueKeysWithValues: [("chars", 500)]
                                )
                        }
                    }
                }
                """
        )
    }
}
