import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl get KEY [--scope S] [--explain]` with `--json` and `--socket P`, parsed by hand and
/// run on the main thread: ArgumentParser reflects over every command's properties and Swift
/// concurrency starts its threads, which together cost more than the request itself. It prints
/// and exits exactly as ``GetCommand`` does; any other command line (a typo, `--help`, a bad
/// key or scope, an option given twice) is left to ArgumentParser, whose messages and usage
/// errors it keeps.
struct QuickGet {
    private var key: String?
    /// `key`, checked.
    private var keyName: KeyName?
    private var scope: String?
    /// `scope`, parsed.
    private var scopePath = ScopePath.root
    private var explain = false
    private var json = false
    private var socket: String?

    /// The command line's `get`, or nil when it is anything else or anything unusual.
    init?(_ arguments: [String]) {
        var verbSeen = false
        var index = 0
        /// The option's value, which must not be set yet nor look like an option.
        func value(replacing current: String?) -> String? {
            guard current == nil, index < arguments.count, !arguments[index].hasPrefix("-") else { return nil }
            index += 1
            return arguments[index - 1]
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            // `--json` and `--socket` may come before the verb (global options), the others only after it.
            case "--json" where !json:
                json = true
            case "--socket":
                guard let socket = value(replacing: socket) else { return nil }
                self.socket = socket
            case "--explain" where verbSeen && !explain:
                explain = true
            case "--scope" where verbSeen:
                guard let scope = value(replacing: scope) else { return nil }
                self.scope = scope
            case "get" where !verbSeen:
                verbSeen = true
            case _ where verbSeen && key == nil && !argument.hasPrefix("-"):
                key = argument
            default:
                return nil
            }
        }
        guard let key, let keyName = try? KeyName(key), let scopePath = try? ScopePath(scope ?? "/") else { return nil }
        self.keyName = keyName
        self.scopePath = scopePath
    }

    /// Asks the daemon, prints, and exits: 0 when the key has a value, 3 when it has none.
    func run() -> Never {
        let transport = UnixSocketTransport(socketPath: GlobalOptions.socketPath(socket))
        do {
            let resolved = try PrefsClient.resolve(keyName!, scope: scopePath, explain: explain, waitingOn: transport)
            GetCommand.show(resolved, json: json, explain: explain)
            exit(resolved.isSet ? 0 : 3)
        } catch let error as PrefsError {
            Output.fail(error)
        } catch {
            Output.fail(PrefsError(.internal, "\(error)"))
        }
    }
}
