import Foundation

/// The checks every draft write passes before anything is stored: what makes a request bad
/// input (400), as opposed to a draft that is merely not publishable yet (``DraftValidation``).
package enum DraftFieldRules {
    /// The longest text stored, in characters (far above any compose limit: a guard, not a rule).
    package static let maximumTextLength = 100_000
    /// The most poll options stored.
    package static let maximumPollOptions = 20

    /// Throws `invalid_request` unless the fields are acceptable.
    package static func check(
        account: String, thread: String?, position: Int?, language: String?, text: String, contentWarning: String?,
        poll: Draft.Poll?
    ) throws {
        try checkSegment(account, field: "account")
        if let thread { try checkSegment(thread, field: "thread") }
        if let position, position < 0 {
            throw PrefsError(.invalidRequest, "The position \(position) is negative; positions start at 0.")
        }
        if position != nil, thread == nil {
            throw PrefsError(.invalidRequest, "A position needs a thread.")
        }
        if let language, !isLanguageTag(language) {
            throw PrefsError(.invalidRequest, "'\(language)' is not a language tag such as 'en' or 'pt-BR'.")
        }
        if text.count > maximumTextLength || (contentWarning?.count ?? 0) > maximumTextLength {
            throw PrefsError(.tooLarge, "The text is over \(maximumTextLength) characters.")
        }
        if let poll {
            guard poll.expiresIn > 0 else {
                throw PrefsError(.invalidRequest, "A poll's expiresIn is a number of seconds above 0, not \(poll.expiresIn).")
            }
            guard poll.options.count <= maximumPollOptions else {
                throw PrefsError(.invalidRequest, "A poll has at most \(maximumPollOptions) options.")
            }
        }
    }

    /// Accounts and threads become scope segments (`/accounts/<account>/threads/<thread>`).
    private static func checkSegment(_ value: String, field: String) throws {
        do {
            _ = try ScopePath.root.appending(value)
            guard !value.contains("/") else { throw PrefsError(.invalidScope, "contains '/'") }
        } catch let error as PrefsError {
            throw PrefsError(
                .invalidRequest,
                "The \(field) '\(value)' is not usable: it must be non-empty and made of letters, digits and _ - . @ + : (\(error.message))"
            )
        }
    }

    private static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return false
        }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}
