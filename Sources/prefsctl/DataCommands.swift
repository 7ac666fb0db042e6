import ArgumentParser
import Foundation
import PrefsKit

/// `prefsctl schema list | show KEY | load FILE`
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Show or register key schemas.",
        subcommands: [List.self, Show.self, Load.self])

    struct List: DaemonCommand {
        static let configuration = CommandConfiguration(abstract: "List every registered schema.")
        @OptionGroup var global: GlobalOptions

        func execute(_ service: any PrefsService) async throws {
            let schemas = try await service.schemas()
            if global.json { return Output.json(["schemas": schemas]) }
            Output.table(
                [["KEY", "TYPE", "DEFAULT", "DESCRIPTION"]]
                    + schemas.sorted { $0.key < $1.key }.map { key, schema in
                        [key, schema.type.rawValue, schema.defaultValue.map(Output.text) ?? "-", schema.description ?? ""]
                    })
        }
    }

    struct Show: DaemonCommand {
        static let configuration = CommandConfiguration(abstract: "Show one key's schema.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The key.") var key: String

        func execute(_ service: any PrefsService) async throws {
            Output.json(try await service.schema(for: key))
        }
    }

    struct Load: DaemonCommand {
        static let configuration = CommandConfiguration(abstract: "Register the schemas of a JSON file (key → schema).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The schema file, or - for standard input.") var file: String

        func execute(_ service: any PrefsService) async throws {
            let schemas = try SchemaFile.decode(try readInput(file), source: file)
            let result = try await service.register(schemas: schemas)
            if global.json { return Output.json(result) }
            print("registered \(schemas.count) schema\(schemas.count == 1 ? "" : "s") (revision \(result.revision))")
        }
    }
}

/// `prefsctl dump [--scope S]`
struct DumpCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump", abstract: "Print the store (or a scope's subtree) as JSON, for `prefsctl load`.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this scope and those below it.") var scope = "/"

    func execute(_ service: any PrefsService) async throws {
        Output.json(try await service.dump(scope: try parseScope(scope)))
    }
}

/// `prefsctl load FILE`
struct LoadCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "load", abstract: "Load a dump: all of it in one transaction, or nothing if any of it is refused.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The dump file, or - for standard input.") var file: String

    func execute(_ service: any PrefsService) async throws {
        let data = try readInput(file)
        let dump: PrefsDump
        do {
            dump = try WireJSON.decode(PrefsDump.self, from: data)
        } catch let error as PrefsError {
            throw PrefsError(error.code, "\(file): \(error.message)")
        } catch let error as DecodingError {
            throw PrefsError(.invalidRequest, "\(file) is not a prefsctl dump: \(error.readableReason)")
        }
        let result = try await service.load(dump)
        if global.json { return Output.json(result) }
        print("loaded \(dump.values.count) values, \(dump.locks.count) locks, \(dump.schemas.count) schemas (revision \(result.revision))")
    }
}

/// The bytes of a file, or of standard input for `-`.
func readInput(_ path: String) throws -> Data {
    if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
    guard let data = FileManager.default.contents(atPath: path) else {
        throw PrefsError(.notFound, "Cannot read \(path).")
    }
    return data
}
