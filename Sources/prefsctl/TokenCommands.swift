import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl token create NAME --role R [--scope S] | token list | token revoke NAME`
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Create, list and revoke the named tokens TCP clients send.",
        discussion: """
            A token has a role — reader, writer or admin — at a scope and below it. Programs send its secret on \
            the daemon's TCP listener (prefsd --listen) as Authorization: Bearer SECRET.
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: DaemonCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token and print its secret, once: prefsd keeps only a hash of it.",
            discussion: "The secret goes to standard output alone (SECRET=$(prefsctl token create …)); what was made, to standard error.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Its name: letters, digits, '.', '_' and '-'; changes made with it are by token:NAME.") var name: String
        @Option(help: "reader, writer or admin.") var role: String
        @Option(help: "Where it may act: this scope and below.") var scope = "/"

        func validate() throws {
            do {
                try AccessToken.checkName(name)
                _ = try AccessRole(named: role)
            } catch let error as PrefsError {
                throw ValidationError(error.message)
            }
            _ = try parseScope(scope)
        }

        func execute(_ service: any PrefsService) async throws {
            let created = try await service.createToken(named: name, role: AccessRole(named: role), scope: parseScope(scope))
            if global.json { return Output.json(created) }
            let token = created.token
            FileHandle.standardError.write(
                Data(
                    "created token \(token.name): \(token.role) at \(token.scope.path) (revision \(created.revision)); its secret is shown this once:\n"
                        .utf8))
            print(created.secret)
        }
    }

    struct List: DaemonCommand {
        static let configuration = CommandConfiguration(abstract: "List the tokens: name, role, scope, when made and last used.")
        @OptionGroup var global: GlobalOptions

        func execute(_ service: any PrefsService) async throws {
            let tokens = try await service.tokens()
            if global.json { return Output.json(["tokens": tokens]) }
            guard !tokens.isEmpty else { return print("no tokens (prefsctl token create NAME --role reader makes one)") }
            Output.table(
                [["NAME", "ROLE", "SCOPE", "CREATED", "LAST USED", "CREATED BY"]]
                    + tokens.map { token in
                        [
                            token.name, token.role.rawValue, token.scope.path, Output.localTime(token.created),
                            token.lastUsed.map(Output.localTime) ?? "never", token.createdBy,
                        ]
                    })
        }
    }

    struct Revoke: DaemonCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a token: every host refuses it from now on, and its watches end.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's name.") var name: String

        func validate() throws {
            do {
                try AccessToken.checkName(name)
            } catch let error as PrefsError {
                throw ValidationError(error.message)
            }
        }

        func execute(_ service: any PrefsService) async throws {
            let result = try await service.revokeToken(named: name)
            if global.json { return Output.json(result) }
            print("revoked token \(name) at revision \(result.revision)")
        }
    }
}
