import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

extension StoreConfiguration {
    /// The defaults, except that no `progress` event can slip into a test's watch streams, and
    /// whatever `configure` changes.
    static func forTests(_ configure: (inout StoreConfiguration) -> Void = { _ in }) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.progressInterval = .seconds(86_400)
        configure(&configuration)
        return configuration
    }
}

/// A store on its own temporary database; close it at the end, as `withStore` does (closing
/// removes the folder).
func makeStore(_ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> EmbeddedStore {
    try EmbeddedStore.temporary(configuration: .forTests(configure))
}

/// A new empty folder for a test's own database files. Remove it with `removeFolder`.
func makeFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appending(path: "prefs-store-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

func removeFolder(_ folder: URL) {
    try? FileManager.default.removeItem(at: folder)
}

/// Runs the `sqlite3` command-line tool on `database` and returns what it prints.
@discardableResult
func sqlite3(_ database: String, _ sql: String) async throws -> String {
    let result = try await CommandResult.runTool("/usr/bin/env", ["sqlite3", database, sql])
    guard result.status == 0 else {
        throw PrefsError(.internal, "sqlite3 \(sql) failed (\(result.status)): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

extension ChangeEvent {
    /// A compact description for comparing event lists: `3 set k@/a=1`.
    var summary: String {
        var text = "\(revision) \(kind)"
        if let key { text += " \(key)" }
        if let scope { text += "@\(scope.path)" }
        if let value { text += "=\(value.canonicalText)" }
        if let source { text += " (\(source))" }
        return text
    }
}
