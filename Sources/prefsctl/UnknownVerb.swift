import ArgumentParser

/// A word where prefsctl expects a verb (`prefsctl gte`, `prefsctl drafts lst`) that is none of
/// the verbs there: a usage error that names the nearest verb — "Did you mean 'get'?" — shown
/// with the usage of the group it was given to, as ArgumentParser shows its own usage errors.
struct UnknownVerb {
    /// The word given.
    var word: String
    /// The command whose verb it should have been: `prefsctl`, `prefsctl drafts`…
    var group: String
    /// That command's verbs.
    var verbs: [String]

    /// The first unknown verb of `arguments` (with global options already after the verb), or
    /// nil when every word in a verb's place is one.
    init?(_ arguments: [String]) {
        var group: any ParsableCommand.Type = Prefsctl.self
        var path = ["prefsctl"]
        for word in arguments {
            guard !word.hasPrefix("-"), word != "help" else { return nil }
            let verbs = group.configuration.subcommands
            guard let verb = verbs.first(where: { $0._commandName == word }) else {
                self.word = word
                self.group = path.joined(separator: " ")
                self.verbs = verbs.map { $0._commandName }
                return
            }
            guard !verb.configuration.subcommands.isEmpty else { return nil }
            group = verb
            path.append(word)
        }
        return nil
    }

    /// `Error: Unknown verb 'gte'. Did you mean 'get'?`, then the group's usage.
    var message: String {
        let suggestion = Self.nearest(to: word, among: verbs).map { " Did you mean '\($0)'?" } ?? ""
        return """
            Error: Unknown verb '\(word)'.\(suggestion)
            Usage: \(group) <subcommand>
              See '\(group) --help' for more information.
            """
    }

    /// The verb nearest to `word` — at most two edits away, counting a swap of two neighbouring
    /// letters as one — or, failing that, the only verb `word` begins.
    static func nearest(to word: String, among verbs: [String]) -> String? {
        let nearest = verbs.map { (verb: $0, distance: editDistance(word, $0)) }.min { $0.distance < $1.distance }
        if let nearest, nearest.distance <= min(2, max(1, word.count / 2)) { return nearest.verb }
        let starting = verbs.filter { $0.hasPrefix(word) }
        return starting.count == 1 ? starting[0] : nil
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours, one edit each.
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
