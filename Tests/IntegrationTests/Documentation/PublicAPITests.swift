import Foundation
import TestHarness
import Testing

/// The public API as an application outside this package meets it: the built modules, compiled
/// against without the package's name, so `package` declarations are out of reach — as they are
/// for an app that depends on prefsd. The package's own targets (examples, tests) cannot show
/// this: they are inside the package.
@Suite("The public API, from outside the package")
struct PublicAPITests {
    /// Type-checks `files` as a module of an app that imports prefsd's libraries.
    static func typecheck(_ files: [String]) async throws -> CommandResult {
        let built = CommandResult.binaries
        // `.build/checkouts`, beside the triple's folder the binaries are in.
        let checkouts = built.deletingLastPathComponent().deletingLastPathComponent().appending(path: "checkouts")
        // C modules that the Swift modules the libraries import load in turn.
        let moduleMaps = [
            checkouts.appending(path: "GRDB.swift/Sources/GRDBSQLite/module.modulemap"),
            checkouts.appending(path: "swift-system/Sources/CSystem/include/module.modulemap"),
            Checkout.url("Sources/SQLiteSettings/module.modulemap"),
        ]
        var arguments = ["swiftc", "-typecheck", "-module-name", "App", "-I", built.appending(path: "Modules").path]
        for map in moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        arguments += ["-load-plugin-executable", built.appending(path: "PrefsKitMacros-tool").path + "#PrefsKitMacros"]
        return try await CommandResult.runTool("/usr/bin/env", arguments + files)
    }

    @Test("README's program, the compose screen and the swift-configuration example build as an app", arguments: [
        "ReadmeExample", "ComposeExample", "ConfigExample",
    ])
    func examplesBuildOutside(example: String) async throws {
        let result = try await Self.typecheck([Checkout.url("Examples/\(example)/main.swift").path])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// What an app must not reach: each line bypasses the engine (its cache, change log and
    /// watchers) or leans on a detail the next release may change.
    static let misuses = [
        "_ = store.storage",
        "_ = try EmbeddedStore(storage: SQLiteStorage(path: \"/tmp/x\", durability: .full), configuration: .init())",
        "_ = StoreConfiguration().rules",
        "_ = KeyState()",
        "_ = StoredValue(value: 1, revision: 1)",
        "_ = PreferenceResolver.self",
        "_ = PreferenceWriteRules.standard",
        "_ = DraftFieldRules.self",
        "_ = ErrorBody.self",
        "_ = WireJSON.self",
        "_ = DefaultPaths.self",
        "_ = PrefsError.Code.notFound.httpStatus",
        "_ = client.transport",
        "_ = UnixSocketTransport.self",
    ]

    @Test("The engine's storage and the domain's internals are out of an app's reach")
    func internalsOutOfReach() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let header = """
            import PrefsClient
            import PrefsEngine
            import PrefsKit
            import PrefsStore

            func misuse(store: EmbeddedStore, client: PrefsClient) throws {
            """
        let source = folder.appending(path: "misuse.swift")
        try (header + "\n" + Self.misuses.map { "    " + $0 }.joined(separator: "\n") + "\n}\n")
            .write(to: source, atomically: true, encoding: .utf8)
        let result = try await Self.typecheck([source.path])
        #expect(result.status != 0)
        let firstLine = header.split(separator: "\n", omittingEmptySubsequences: false).count + 1
        for (offset, misuse) in Self.misuses.enumerated() {
            #expect(result.stderr.contains("misuse.swift:\(firstLine + offset):"), "compiled in an app: \(misuse)")
        }
    }
}
