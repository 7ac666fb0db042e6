import Foundation
import PrefsKit
import TestHarness
import Testing

/// README's Swift sections are example programs cut in pieces, each followed by what it prints:
/// both hold, against an embedded store and against a daemon.
@Suite(.timeLimit(.minutes(5))) struct ReadmeSwiftTests {
    /// A README section and the example program it is.
    enum Section: String, CaseIterable, Sendable {
        case swift = "Swift"
        case swiftConfiguration = "swift-configuration"

        /// The program, in the checkout.
        var program: String {
            switch self {
            case .swift: "Examples/ReadmeExample/main.swift"
            case .swiftConfiguration: "Examples/ConfigExample/main.swift"
            }
        }

        /// The program's executable.
        var executable: String {
            switch self {
            case .swift: "readme-example"
            case .swiftConfiguration: "config-example"
            }
        }
    }

    /// The fenced blocks of `language` in README's `section`, in order.
    static func blocks(_ language: String, in section: Section) throws -> [String] {
        let readme = try String(contentsOf: Checkout.url("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n## \(section.rawValue)\n"))
        let text = readme[start.upperBound...]
        let end = text.range(of: "\n## ")?.lowerBound ?? text.endIndex
        var blocks: [String] = []
        var current: [Substring]?
        for line in text[..<end].split(separator: "\n", omittingEmptySubsequences: false) {
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

    @Test(arguments: Section.allCases)
    func theSectionIsTheExampleProgram(_ section: Section) throws {
        let program = try String(contentsOf: Checkout.url(section.program), encoding: .utf8)
        #expect(try Self.blocks("swift", in: section).joined(separator: "\n\n") + "\n" == program)
    }

    /// The examples run embedded (on SQLite) or against a daemon, on SQLite or PostgreSQL.
    @Test(arguments: Section.allCases, Backend.allCases.filter { $0 != .postgres })
    func theExampleProgramPrintsWhatTheSectionShows(_ section: Section, _ backend: Backend) async throws {
        let expected = try Self.blocks("text", in: section).joined(separator: "\n") + "\n"
        let result: CommandResult
        switch backend {
        case .embedded, .postgres:
            result = try await CommandResult.run(section.executable, [])
        case .daemon:
            let daemon = try await Daemon()
            result = try await CommandResult.run(section.executable, ["--socket", daemon.socketPath])
        case .daemonOnPostgres:
            result = try await Daemon.onPostgres { daemon in
                try await CommandResult.run(section.executable, ["--socket", daemon.socketPath])
            }
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == expected)
    }
}
