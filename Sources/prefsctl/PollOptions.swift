import ArgumentParser
import PrefsKit

/// `--poll-option TEXT…`, `--poll-expires SECONDS`, `--poll-multiple`: a draft's poll, as
/// `drafts create` and `drafts edit` take it.
struct PollOptions: ParsableArguments {
    /// How long a new poll runs unless `--poll-expires` says otherwise: a day.
    static let defaultExpiresIn = 86_400

    @Option(
        name: .customLong("poll-option"),
        help: ArgumentHelp("A poll choice; repeat it for each, in order (on edit: they replace the poll's).", valueName: "text"))
    var choices: [String] = []

    @Option(
        name: .customLong("poll-expires"),
        help: ArgumentHelp("How long the poll runs, in seconds (default: \(defaultExpiresIn), a day).", valueName: "seconds"))
    var expiresIn: Int?

    @Flag(name: .customLong("poll-multiple"), inversion: .prefixedNo, help: "Let voters pick several choices, or not.")
    var multiple: Bool?

    /// Whether none of them is given.
    var isEmpty: Bool { choices.isEmpty && expiresIn == nil && multiple == nil }

    /// The poll they ask for, made from `current`: given choices replace its choices, and what the
    /// options do not say stays as it was (or takes the defaults). Throws `invalid_request` when
    /// there are no choices, neither given nor current.
    func poll(changing current: Draft.Poll?) throws -> Draft.Poll {
        let choices = choices.isEmpty ? current?.options ?? [] : choices
        guard !choices.isEmpty else {
            throw PrefsError(.invalidRequest, "There is no poll to change: give its choices with --poll-option.")
        }
        return Draft.Poll(
            options: choices, expiresIn: expiresIn ?? current?.expiresIn ?? Self.defaultExpiresIn,
            multiple: multiple ?? current?.multiple ?? false)
    }
}
