import Foundation
import PackagePlugin

/// Compiles the package's SQL migrations — `Migrations/DIALECT/NNNN_name.sql`, one folder per
/// database (`sqlite`, `postgres`) — into the target as Swift source (`EmbeddedMigrations`, a list
/// per dialect, each migration named `NNNN_name`), so a built binary carries its schema and can
/// migrate a database wherever it is installed.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let migrations = context.package.directoryURL.appending(path: "Migrations")
        let dialects = try FileManager.default
            .contentsOfDirectory(at: migrations, includingPropertiesForKeys: [.isDirectoryKey])
            .filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        var arguments: [String] = []
        var inputFiles: [URL] = []
        for dialect in dialects {
            let sqlFiles = try FileManager.default
                .contentsOfDirectory(at: dialect, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "sql" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
            arguments += ["--list", dialect.lastPathComponent]
            arguments += sqlFiles.map { "\($0.deletingPathExtension().lastPathComponent)=\($0.path)" }
            inputFiles += sqlFiles
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputFiles.count) SQL migrations",
                executable: try context.tool(named: "TextEmbedder").url,
                arguments: [output.path, "EmbeddedMigrations"] + arguments,
                inputFiles: inputFiles,
                outputFiles: [output]
            )
        ]
    }
}
