import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl`: the command line for prefsd.
struct Prefsctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefsctl",
        abstract: "Query and change prefsd's preferences, and watch them change.",
        discussion: """
            Values on the command line are JSON when they parse as JSON, else strings: \
            `prefsctl set timeline.fontSize 15` stores the number 15, `prefsctl set ui.theme dark` \
            the string "dark".

            Exit status: 0 ok (also when there was nothing to reset or unlock), 1 failed \
            (a refused value, an invalid draft for `drafts validate`), 2 usage (a bad option, \
            key or scope), 3 not found, 4 conflict (locked, stale revision), 69 the daemon \
            cannot be reached or went away (a watch it ended by stopping).
            """,
        version: prefsVersion,
        subcommands: [
            StatusCommand.self, GetCommand.self, SetCommand.self, ResetCommand.self, ListCommand.self,
            WatchCommand.self, LockCommand.self, UnlockCommand.self, SchemaCommand.self, DumpCommand.self,
            LoadCommand.self, DraftsCommand.self, HistoryCommand.self, LogCommand.self, DiffCommand.self, RevertCommand.self,
            TokenCommand.self, UICommand.self, SyncCommand.self, ConflictsCommand.self,
        ]
    )

    /// Parses the command line and runs the verb, exiting with README's statuses.
    static func main() async {
        let arguments = GlobalOptions.movedAfterVerb(Array(CommandLine.arguments.dropFirst()))
        if let unknown = UnknownVerb(arguments) {
            FileHandle.standardError.write(Data((unknown.message + "\n").utf8))
            Foundation.exit(2)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                // Usage errors: ArgumentParser's message with the verb's usage, status 2.
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

@main
enum PrefsctlMain {
    /// `get`, the verb scripts run most, runs on the main thread without ArgumentParser
    /// (``QuickGet``); every other command line goes to ``Prefsctl``.
    static func main() {
        if let get = QuickGet(Array(CommandLine.arguments.dropFirst())) { get.run() }
        Task {
            await Prefsctl.main()
            exit(0)
        }
        dispatchMain()
    }
}

/// Options every verb takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The daemon's socket (default: $PREFSD_SOCKET, else $XDG_RUNTIME_DIR/prefsd/prefsd.sock).")
    var socket: String?

    @Flag(help: "Machine output: JSON, in the shapes of the HTTP API.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "How long a change whose answer was lost is sent again before prefsctl gives up (exit status 5).",
            discussion: "Every change goes with an Idempotency-Key, so sending it again never applies it twice.",
            valueName: "seconds"))
    var retryFor: Double = 10

    @Option(help: ArgumentHelp("Why: recorded with every change this command makes, like a commit message.", valueName: "text"))
    var reason: String?

    /// The arguments with global options given before the verb (`prefsctl --json get k`)
    /// moved after it, where ArgumentParser reads them.
    static func movedAfterVerb(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--socket=") || argument.hasPrefix("--retry-for=")
                || argument.hasPrefix("--reason=")
            {
                leading.append(argument)
                index += 1
            } else if argument == "--socket" || argument == "--retry-for" || argument == "--reason", index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        // The verb, and for `schema` or `drafts` its sub-verb, then the moved options, then the rest.
        var verbs = [arguments[index]]
        if verbsWithSubVerbs.contains(arguments[index]), index + 1 < arguments.count { verbs.append(arguments[index + 1]) }
        return verbs + leading + arguments[(index + verbs.count)...]
    }

    /// The verbs that are groups of sub-verbs (`schema`, `drafts`): options go after both.
    private static let verbsWithSubVerbs = Set(
        Prefsctl.configuration.subcommands.compactMap { verb in
            verb.configuration.subcommands.isEmpty ? nil : verb.configuration.commandName
        })

    func validate() throws {
        do {
            try reason.map(ChangeOrigin.checkReason)
        } catch let error as PrefsError {
            throw ValidationError(error.message)
        }
    }

    /// The socket to use.
    var socketPath: String {
        Self.socketPath(socket)
    }

    /// The socket to use when `--socket` is `option`.
    static func socketPath(_ option: String?) -> String {
        option ?? DefaultPaths(environment: ProcessInfo.processInfo.environment, uid: getuid()).socket
    }

    /// A client for the daemon, over the lean transport (plain POSIX calls, no networking library).
    func client() -> PrefsClient {
        PrefsClient(
            transport: UnixSocketTransport(socketPath: socketPath),
            writeRetryDeadline: .milliseconds(Int64((max(0, retryFor) * 1000).rounded())), userAgent: "prefsctl/\(prefsVersion)")
    }

    /// Runs a verb's work with a client for the daemon: a ``PrefsError`` becomes a message on
    /// stderr and its exit status.
    func run(_ work: (PrefsClient) async throws -> Void) async throws {
        do {
            let client = client()
            if let reason {
                try await client.withReason(reason) { try await work(client) }
            } else {
                try await work(client)
            }
        } catch let error as PrefsError {
            Output.fail(error)
        }
    }
}

/// A verb that talks to the daemon: errors become a message on stderr and their exit status.
protocol DaemonCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    /// The verb's work.
    func execute(_ service: any PrefsService) async throws
}

extension DaemonCommand {
    mutating func run() async throws {
        try await global.run { try await execute($0) }
    }
}

/// Parses `--scope`. A verb checks its scope in `validate()`, so that a bad one is a usage
/// error (exit 2) shown with the verb's usage, found before the daemon is asked.
func parseScope(_ text: String) throws -> ScopePath {
    do {
        return try ScopePath(text)
    } catch let error as PrefsError {
        throw ValidationError(error.message)
    }
}

/// Checks a key given on the command line, as ``parseScope(_:)`` does a scope: a bad key is a
/// usage error too.
func checkKey(_ key: String) throws {
    do {
        try KeyName.validate(key)
    } catch let error as PrefsError {
        throw ValidationError(error.message)
    }
}
