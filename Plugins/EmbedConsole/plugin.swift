import Foundation
import PackagePlugin

/// Compiles the console's files — `Console/*.html`, `*.js`, `*.css`, `*.svg`, one flat folder — into
/// the target as Swift source (`EmbeddedConsole.files`, each file by its name), so that prefsd
/// serves its console at `/ui/` with nothing to install beside the binary.
@main
struct EmbedConsole: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "Console")
        let files = try FileManager.default
            .contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { ["html", "js", "css", "svg"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedConsole.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) console files",
                executable: try context.tool(named: "TextEmbedder").url,
                arguments: [output.path, "EmbeddedConsole", "--list", "files"] + files.map { "\($0.lastPathComponent)=\($0.path)" },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
