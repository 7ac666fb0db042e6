/// How an OpenFeature evaluation context becomes a scope (`prefsd --ofrep-scope`): a path whose
/// segments are literal, or a context attribute in braces — `/tenants/{tenant}/users/{targetingKey}`.
///
/// A context that lacks an attribute reads at the deepest scope the template builds from what it
/// has: with only `tenant`, `/tenants/acme` (the literal `users` is kept only before an attribute
/// that follows it). `{scope}`, allowed as the template's last element only, takes the context's
/// `scope` attribute as a whole path (`/users/bob`), appended (`/tenants/{tenant}/{scope}`). An attribute that is not a string or
/// whole number, or not a valid path segment, is the caller's mistake: `invalid_request`, which
/// OFREP answers as `INVALID_CONTEXT`.
package struct ScopeTemplate: Sendable, Hashable, CustomStringConvertible {
    /// One element of the template.
    enum Element: Sendable, Hashable {
        case literal(String)
        case attribute(String)
        /// `{scope}`: the context's `scope` attribute, a whole path.
        case scopePath
    }

    let elements: [Element]
    package let description: String

    /// The template that reads the context's `scope` attribute, or `/` without one.
    package static let contextScope = try! ScopeTemplate("{scope}")

    /// Parses a template; `invalid_request` saying what is wrong with it.
    package init(_ text: String) throws {
        description = text
        guard text == "{scope}" || text.hasPrefix("/") else {
            throw PrefsError(.invalidRequest, "A scope template starts with / (or is {scope}), like /tenants/{tenant}, not '\(text)'.")
        }
        var elements: [Element] = []
        for segment in text.split(separator: "/") {
            if segment.hasPrefix("{"), segment.hasSuffix("}"), segment.count > 2 {
                let name = String(segment.dropFirst().dropLast())
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else {
                    throw PrefsError(.invalidRequest, "'\(segment)' in the scope template names no attribute a context can have.")
                }
                elements.append(name == "scope" ? .scopePath : .attribute(name))
            } else {
                guard !segment.contains("{"), !segment.contains("}") else {
                    throw PrefsError(.invalidRequest, "'\(segment)' in the scope template is neither a segment nor a whole {attribute}.")
                }
                _ = try ScopePath.root.appending(String(segment))
                elements.append(.literal(String(segment)))
            }
        }
        if let index = elements.firstIndex(of: .scopePath), index != elements.count - 1 {
            throw PrefsError(.invalidRequest, "{scope} may only end a scope template, as in /tenants/{tenant}/{scope}.")
        }
        self.elements = elements
    }

    /// The scope `context` (an evaluation context's attributes, `targetingKey` among them) reads at.
    package func scope(for context: [String: JSONValue]) throws -> ScopePath {
        var scope = ScopePath.root
        var pending: [String] = []
        for element in elements {
            switch element {
            case .literal(let segment):
                pending.append(segment)
            case .attribute(let name):
                guard let value = context[name] else { return scope }
                for literal in pending { scope = try scope.appending(literal) }
                pending = []
                scope = try Self.append(value, named: name, to: scope)
            case .scopePath:
                guard let value = context["scope"] else { return scope }
                guard case .string(let text) = value, let path = try? ScopePath(text) else {
                    throw PrefsError(.invalidRequest, "The context's scope must be a scope path such as /users/bob.")
                }
                for literal in pending { scope = try scope.appending(literal) }
                pending = []
                for segment in path.path.split(separator: "/") { scope = try scope.appending(String(segment)) }
            }
        }
        for literal in pending { scope = try scope.appending(literal) }
        return scope
    }

    private static func append(_ value: JSONValue, named name: String, to scope: ScopePath) throws -> ScopePath {
        let text: String
        switch value {
        case .string(let string): text = string
        case .integer(let number): text = String(number)
        default: throw PrefsError(.invalidRequest, "The context's '\(name)' must be a string or a whole number to name a scope.")
        }
        do {
            guard !text.contains("/") else { throw PrefsError(.invalidScope, "one segment only") }
            return try scope.appending(text)
        } catch {
            throw PrefsError(
                .invalidRequest,
                "The context's '\(name)' ('\(text.prefix(60))') cannot be a scope segment: letters, digits and _ - . @ + : only.")
        }
    }
}
