import Foundation
import TestHarness
import Testing

/// A migration that has shipped is never edited (GRDB's rule): each file in `Migrations/` is held
/// to the checksum `Migrations/SHA256SUMS` lists for it, and every file is listed. A new schema
/// change is a new file, whose line is added to the list.
@Suite struct MigrationChecksumTests {
    /// `Migrations/` at the package root.
    static let folder = Checkout.url("Migrations")

    @Test func everyMigrationHasTheChecksumItShippedWith() async throws {
        let listed = try String(contentsOf: Self.folder.appending(path: "SHA256SUMS"), encoding: .utf8)
            .split(separator: "\n").map { line in
                let parts = line.split(separator: " ", omittingEmptySubsequences: true)
                return (sum: String(parts[0]), file: String(parts[1]))
            }
        var files: [String] = []
        for dialect in ["sqlite", "postgres"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.appending(path: dialect).path)
            files += names.filter { $0.hasSuffix(".sql") }.map { "\(dialect)/\($0)" }
        }
        #expect(Set(listed.map(\.file)) == Set(files), "Migrations/SHA256SUMS lists exactly the migrations there are")
        for (sum, file) in listed {
            let computed = try await CommandResult.runTool("/usr/bin/sha256sum", [Self.folder.appending(path: file).path])
            #expect(
                computed.stdout.hasPrefix(sum + " "),
                "\(file) was edited after it shipped: add a new migration instead (its checksum is now \(computed.stdout.prefix(64)))")
        }
    }
}
