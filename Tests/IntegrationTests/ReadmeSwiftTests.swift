import Foundation
import PrefsKit
import TestHarness
import Testing

/// README's "Swift" section is `Examples/ReadmeExample/main.swift` cut in pieces, each followed
/// by what it prints: both hold, against an embedded store and against a daemon.
@Suite(.timeLimit(.minutes(2))) struct ReadmeSwiftTests {
    /// The checkout: this file is `Tests/IntegrationTests/ReadmeSwiftTests.swift` in it.
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The fenced blocks of `language` in README's "## Swift" section, in order.
    static func blocks(_ language: String) throws -> [String] {
        let readme = try String(contentsOf: checkout.appending(path: "README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n## Swift\n"))
        let section = readme[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var blocks: [String] = []
        var current: [Substring]?
        for line in section[..<end].split(separator: "\n", omittingEmptySubsequences: false) {
            if let lines = current {
                if line == "```" {
                    blocks.append(lines.joined(separator: "\n"))
                    current = nil
                } else {
                    current = lines + [line]
                }
            } else if line == "```\(language)" {
                current = []
            }
        }
        return blocks
    }

    @Test func theSwiftSectionIsTheExampleProgram() throws {
        let program = try String(
            contentsOf: Self.checkout.appending(path: "Examples/ReadmeExample/main.swift"), encoding: .utf8)
        #expect(try Self.blocks("swift").joined(separator: "\n\n") + "\n" == program)
    }

    /// The example runs embedded (on SQLite) or against a daemon, on SQLite or PostgreSQL.
    @Test(arguments: Backend.allCases.filter { $0 != .postgres })
    func theExampleProgramPrintsWhatTheSectionShows(_ backend: Backend) async throws {
        let expected = try Self.blocks("text").joined(separator: "\n") + "\n"
        let result: CommandResult
        switch backend {
        case .embedded, .postgres:
            result = try await CommandResult.run("readme-example", [])
        case .daemon:
            let daemon = try await Daemon()
            result = try await CommandResult.run("readme-example", ["--socket", daemon.socketPath])
        case .daemonOnPostgres:
            result = try await Daemon.onPostgres { daemon in
                try await CommandResult.run("readme-example", ["--socket", daemon.socketPath])
            }
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == expected)
    }
}
