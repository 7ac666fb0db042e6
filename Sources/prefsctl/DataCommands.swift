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

        func validate() throws {
            try checkKey(key)
        }

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
            print("registered \(Output.counted(schemas.count, "schema")) (revision \(result.revision))")
        }
    }
}

/// `prefsctl dump [--scope S]`
struct DumpCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump", abstract: "Print the store (or a scope's subtree) as JSON, for `prefsctl load`.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this scope and those below it.") var scope = "/"

    func validate() throws {
        _ = try parseScope(scope)
    }

    func execute(_ service: any PrefsService) async throws {
        Output.json(try await service.dump(scope: try parseScope(scope)))
    }
}

/// `prefsctl load FILE [--replace]`
struct LoadCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "load", abstract: "Load a dump: all of it in one transaction, or nothing if any of it is refused.",
        discussion: """
            A load merges: values and locks that the store holds and the dump does not stay. With \
            --replace, those of the dump's scope and every scope below it are removed in the same \
            transaction, so that this subtree ends up equal to the dump. Schemas are registered \
            either way; none is removed.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The dump file (from prefsctl dump), or - for standard input.") var file: String
    @Flag(help: "Make the dump's scope and everything below it equal to the dump.") var replace = false

    func execute(_ service: any PrefsService) async throws {
        let dump = try Self.decode(try readInput(file), from: file)
        let result = try await service.load(dump, replacing: replace)
        if global.json { return Output.json(result) }
        let counts = [
            Output.counted(dump.values.count, "value"), Output.counted(dump.locks.count, "lock"),
            Output.counted(dump.schemas.count, "schema"),
        ]
        print("loaded \(counts.joined(separator: ", ")) (revision \(result.revision))")
    }

    /// The dump in `data`, read from `file`; or an error that says, in plain words, why it is not one.
    private static func decode(_ data: Data, from file: String) throws -> PrefsDump {
        let notADump = "\(file) is not a prefsctl dump:"
        guard let json = try? JSONValue(parsing: data) else {
            throw PrefsError(.invalidRequest, "\(notADump) it is not JSON.")
        }
        guard case .object(let members) = json, members["format"] != nil else {
            throw PrefsError(
                .invalidRequest,
                "\(notADump) expected an object with \"format\" (and \"scope\", \"schemas\", \"values\", \"locks\"), as prefsctl dump writes.")
        }
        do {
            return try WireJSON.decode(PrefsDump.self, from: data)
        } catch let error as PrefsError {
            throw PrefsError(error.code, "\(file): \(error.message)")
        } catch let error as DecodingError {
            throw PrefsError(.invalidRequest, "\(notADump) \(error.readableReason)")
        }
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
