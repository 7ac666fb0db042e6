import ArgumentParser
import Foundation
import PrefsKit

/// `prefsctl watch [KEY...] [--prefix P] [--scope S] [--since REV] [--count N] [--timeout S]`
struct WatchCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print changes as they are committed, one line each.",
        discussion: """
            With no key or prefix, every key. With --scope, only changes of the effective value at \
            that scope. With --since, first every change after that revision. Progress events \
            (shown with --json) carry the current revision to resume from.
            """
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Keys to watch.") var keys: [String] = []
    @Option(help: "Watch keys starting with this (repeatable).") var prefix: [String] = []
    @Option(help: "Follow effective values at this scope.") var scope: String?
    @OptionGroup var options: WatchOptions

    func execute(_ service: any PrefsService) async throws {
        let request = WatchRequest(keys: keys, prefixes: prefix, scope: try scope.map(parseScope))
        try await options.follow(request, on: service, json: global.json)
    }
}
