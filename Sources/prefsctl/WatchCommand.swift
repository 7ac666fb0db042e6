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
            (shown with --json) carry the current revision to resume from. Ends with status 0 \
            after --count changes or --timeout seconds, and with 69 if the daemon stops first.
            """
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Keys to watch.") var keys: [String] = []
    @Option(help: "Watch keys starting with this (repeatable).") var prefix: [String] = []
    @Option(help: "Follow effective values at this scope.") var scope: String?
    @OptionGroup var options: WatchOptions

    func validate() throws {
        for key in keys { try checkKey(key) }
        _ = try scope.map(parseScope)
    }

    func execute(_ service: any PrefsService) async throws {
        let request = WatchRequest(keys: keys, prefixes: prefix, scope: try scope.map(parseScope))
        try await options.follow(request, on: service, json: global.json)
    }
}
