import Foundation
import PackagePlugin

/// Compiles the package's `Migrations/*.sql` files into the target as Swift source, so a built
/// binary carries its schema and can migrate a database wherever it is installed.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let migrations = context.package.directoryURL.appending(path: "Migrations")
        let sqlFiles = try FileManager.default
            .contentsOfDirectory(at: migrations, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(sqlFiles.count) SQL migrations",
                executable: try context.tool(named: "MigrationEmbedder").url,
                arguments: [output.path] + sqlFiles.map(\.path),
                inputFiles: sqlFiles,
                outputFiles: [output]
            )
        ]
    }
}
