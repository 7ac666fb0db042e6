import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl ui [--read-only] [--scope S] [--no-open]`
struct UICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ui", abstract: "Print a sign-in link to prefsd's console in the browser, and open it where a browser is at hand.",
        discussion: """
            The console is served on the daemon's TCP listener (prefsd --listen 127.0.0.1:PORT) at /ui/. The link \
            signs in without a secret to paste: it works once, within two minutes, and opens a session of the \
            console's tab only. The session acts as you (an admin at /) unless --read-only or --scope narrow it.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "A read-only console: it shows no editing control, and prefsd refuses its writes.") var readOnly = false
    @Option(help: "The scope the console may see and change: this scope and below.") var scope: String?
    @Flag(help: "Only print the link, even where a browser could open it.") var noOpen = false

    func validate() throws {
        _ = try scope.map(parseScope)
    }

    mutating func run() async throws {
        let (readOnly, scope, json, open) = (readOnly, try scope.map(parseScope), global.json, !noOpen)
        try await global.run { client in
            let link = try await client.consoleLink(role: readOnly ? .reader : nil, scope: scope)
            if json { return Output.json(link) }
            print(link.url)
            if open, Self.openInBrowser(link.url) {
                FileHandle.standardError.write(Data("opened in your browser; the link works once, until \(Output.localTime(link.expiresAt))\n".utf8))
            }
        }
    }

    /// Opens `url` with `$BROWSER` (a program on `PATH`, or a path), or `xdg-open` in a graphical
    /// session; false where neither is at hand.
    private static func openInBrowser(_ url: String) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        let graphical = environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil
        guard let opener = environment["BROWSER"].flatMap({ $0.isEmpty ? nil : $0 }) ?? (graphical ? "xdg-open" : nil) else { return false }
        let candidates = opener.contains("/") ? [opener] : (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(opener)" }
        guard let path = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        return true
    }
}
