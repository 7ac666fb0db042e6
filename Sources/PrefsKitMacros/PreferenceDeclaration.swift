import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// A property marked `@Preference`, checked: what the expansion needs, or why it cannot be expanded.
struct PreferenceDeclaration {
    /// The property's name, without backticks: `statusContentMode`.
    let property: String
    /// The property's type, as written.
    let type: TypeSyntax
    /// The default value's expression, as written (`nil` for an optional without one).
    let defaultValue: ExprSyntax
    /// The key's name, as written in the attribute: `"timeline.statusContentMode"`.
    let keyName: StringLiteralExprSyntax
    /// The property's own access modifier, repeated on the key type.
    let access: Keyword?
    /// The access modifier the key's members need: `public` or `package` when the property (or its
    /// extension) is, since the members witness the protocol's requirements.
    let memberAccess: Keyword?

    /// The generated key type: `__PreferenceKey_statusContentMode`.
    var keyType: TokenSyntax { .identifier(PreferenceMacro.keyTypePrefix + property) }

    /// The checked declaration and the problems found; the declaration is nil when there are problems.
    static func check(
        _ attribute: AttributeSyntax,
        on declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) -> (declaration: PreferenceDeclaration?, problems: [Diagnostic]) {
        var problems: [Diagnostic] = []
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            return (nil, [Diagnostic(node: attribute, message: PreferenceDiagnostic.notAProperty)])
        }
        let enclosingExtension = context.lexicalContext.first?.as(ExtensionDeclSyntax.self)
        if !(enclosingExtension.map(extendsPreferenceValues) ?? false) {
            problems.append(Diagnostic(node: attribute, message: PreferenceDiagnostic.outsidePreferenceValues))
        }
        checkKind(of: variable, problems: &problems)
        guard variable.bindings.count == 1, let binding = variable.bindings.first else {
            let extra = variable.bindings.dropFirst().first.map { Syntax($0) } ?? Syntax(variable.bindings)
            problems.append(Diagnostic(node: extra, message: PreferenceDiagnostic.multipleBindings))
            return (nil, problems)
        }
        let (property, type, defaultValue) = checkBinding(binding, problems: &problems)
        let keyName = checkKeyName(in: attribute, problems: &problems)

        guard problems.isEmpty, let property, let type, let defaultValue, let keyName else {
            return (nil, problems)
        }
        let propertyAccess = accessLevel(in: variable.modifiers)
        let extensionAccess = enclosingExtension.flatMap { accessLevel(in: $0.modifiers) }
        let effectiveAccess = propertyAccess ?? extensionAccess
        let checked = PreferenceDeclaration(
            property: property,
            type: type,
            defaultValue: defaultValue,
            keyName: keyName,
            // Repeating the extension's level on the key type would only add a "redundant modifier" warning.
            access: propertyAccess == extensionAccess ? nil : propertyAccess,
            memberAccess: [.public, .package].contains(effectiveAccess) ? effectiveAccess : nil
        )
        return (checked, [])
    }

    /// Whether `declaration` is a single `var name: Type` without accessors, which can become computed.
    static func canHoldAccessors(_ declaration: some DeclSyntaxProtocol) -> Bool {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            variable.bindingSpecifier.tokenKind == .keyword(.var),
            variable.bindings.count == 1, let binding = variable.bindings.first
        else { return false }
        return binding.pattern.is(IdentifierPatternSyntax.self) && binding.typeAnnotation != nil
            && binding.accessorBlock == nil
    }

    /// Reports `static`/`class` and `let`, each with a fix-it.
    private static func checkKind(of variable: VariableDeclSyntax, problems: inout [Diagnostic]) {
        for modifier in variable.modifiers
        where [.keyword(.static), .keyword(.class)].contains(modifier.name.tokenKind) {
            let removal = FixIt.Change.replace(oldNode: Syntax(modifier), newNode: Syntax(DeclModifierListSyntax([])))
            let fixIt = FixIt(message: PreferenceFixIt.removeStatic, changes: [removal])
            problems.append(Diagnostic(node: modifier, message: PreferenceDiagnostic.staticProperty, fixIts: [fixIt]))
        }
        let specifier = variable.bindingSpecifier
        if specifier.tokenKind == .keyword(.let) {
            let change = FixIt.Change.replace(
                oldNode: Syntax(specifier),
                newNode: Syntax(specifier.with(\.tokenKind, .keyword(.var)))
            )
            let fixIt = FixIt(message: PreferenceFixIt.useVar, changes: [change])
            problems.append(Diagnostic(node: specifier, message: PreferenceDiagnostic.letProperty, fixIts: [fixIt]))
        }
    }

    /// The binding's name, type and default, each nil where a problem is reported instead.
    private static func checkBinding(
        _ binding: PatternBindingSyntax,
        problems: inout [Diagnostic]
    ) -> (property: String?, type: TypeSyntax?, defaultValue: ExprSyntax?) {
        let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier
        let property = identifier.map { $0.identifier?.name ?? $0.text }
        if property == nil {
            problems.append(Diagnostic(node: binding.pattern, message: PreferenceDiagnostic.notASimpleName))
        }
        let spelledName = property ?? binding.pattern.trimmedDescription

        let type = binding.typeAnnotation?.type.trimmed
        if type == nil {
            let annotated = binding
                .with(\.pattern, binding.pattern.with(\.trailingTrivia, []))
                .with(
                    \.typeAnnotation,
                    TypeAnnotationSyntax(
                        colon: .colonToken(trailingTrivia: .space),
                        type: IdentifierTypeSyntax(
                            name: .identifier("<#Type#>", trailingTrivia: binding.pattern.trailingTrivia)
                        )
                    )
                )
            let change = FixIt.Change.replace(oldNode: Syntax(binding), newNode: Syntax(annotated))
            let fixIt = FixIt(message: PreferenceFixIt.addType, changes: [change])
            let message = PreferenceDiagnostic.missingType(property: spelledName)
            problems.append(Diagnostic(node: binding.pattern, message: message, fixIts: [fixIt]))
        }

        if let accessors = binding.accessorBlock {
            problems.append(Diagnostic(node: accessors, message: PreferenceDiagnostic.hasAccessors))
        }

        // Like a stored property, an optional without an initial value starts as nil.
        var defaultValue = binding.initializer?.value.trimmed
        if defaultValue == nil, let type, isOptional(type) {
            defaultValue = ExprSyntax(NilLiteralExprSyntax())
        } else if defaultValue == nil, binding.accessorBlock == nil {
            let initialized = binding.with(
                \.initializer,
                InitializerClauseSyntax(
                    equal: .equalToken(leadingTrivia: .space, trailingTrivia: .space),
                    value: DeclReferenceExprSyntax(baseName: .identifier("<#default#>"))
                )
            )
            let change = FixIt.Change.replace(oldNode: Syntax(binding), newNode: Syntax(initialized))
            let fixIt = FixIt(message: PreferenceFixIt.addDefault, changes: [change])
            let message = PreferenceDiagnostic.missingDefault(property: spelledName, type: type?.description ?? "Type")
            problems.append(Diagnostic(node: binding, message: message, fixIts: [fixIt]))
        }
        return (property, type, defaultValue)
    }

    /// The attribute's string literal if it is a valid key name; otherwise reports why not.
    private static func checkKeyName(
        in attribute: AttributeSyntax,
        problems: inout [Diagnostic]
    ) -> StringLiteralExprSyntax? {
        guard let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression else {
            problems.append(Diagnostic(node: attribute, message: PreferenceDiagnostic.missingName))
            return nil
        }
        guard let literal = argument.as(StringLiteralExprSyntax.self), let name = literal.representedLiteralValue
        else {
            problems.append(Diagnostic(node: argument, message: PreferenceDiagnostic.nameNotALiteral))
            return nil
        }
        guard let problem = KeyNameRule.problem(with: name) else {
            return literal.trimmed
        }
        var fixIts: [FixIt] = []
        let lowercased = name.prefix(1).lowercased() + name.dropFirst()
        if lowercased != name, KeyNameRule.problem(with: lowercased) == nil {
            let fixed = StringLiteralExprSyntax(content: lowercased)
                .with(\.leadingTrivia, literal.leadingTrivia)
                .with(\.trailingTrivia, literal.trailingTrivia)
            let change = FixIt.Change.replace(oldNode: Syntax(literal), newNode: Syntax(fixed))
            fixIts.append(FixIt(message: PreferenceFixIt.useName(lowercased), changes: [change]))
        }
        let message = PreferenceDiagnostic.invalidName(name: name, problem: problem)
        problems.append(Diagnostic(node: literal, message: message, fixIts: fixIts))
        return nil
    }

    /// Whether `extension` extends `PreferenceValues` (or `PrefsKit.PreferenceValues`).
    private static func extendsPreferenceValues(_ extension: ExtensionDeclSyntax) -> Bool {
        ["PreferenceValues", "PrefsKit.PreferenceValues"].contains(`extension`.extendedType.trimmedDescription)
    }

    /// Whether `type` is spelled as an optional: `T?`, `Optional<T>` or `Swift.Optional<T>`.
    private static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text == "Optional" }
        if let member = type.as(MemberTypeSyntax.self) {
            return member.baseType.trimmedDescription == "Swift" && member.name.text == "Optional"
        }
        return false
    }

    /// The access-level keyword among `modifiers`, ignoring setter-only ones like `private(set)`.
    private static func accessLevel(in modifiers: DeclModifierListSyntax) -> Keyword? {
        for modifier in modifiers where modifier.detail == nil {
            if case .keyword(let keyword) = modifier.name.tokenKind,
                [.open, .public, .package, .internal, .fileprivate, .private].contains(keyword)
            {
                return keyword == .open ? .public : keyword
            }
        }
        return nil
    }
}
