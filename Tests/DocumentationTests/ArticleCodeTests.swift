import Foundation
import Testing

/// Every ```swift block of PrefsKit's DocC catalog is in the test file that mirrors its page,
/// word for word (indentation aside, since a test indents what a page shows at the margin) and
/// in one piece — so the code the documentation shows compiles, and runs in those tests.
@Suite struct ArticleCodeTests {
    /// The package root: this file is `Tests/DocumentationTests/ArticleCodeTests.swift` in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let catalog = root.appending(path: "Sources/PrefsKit/PrefsKit.docc")

    /// Each page of the catalog, and the test file that runs its code.
    static let mirrors = [
        "PrefsKit.md": "OverviewTests.swift",
        "GettingStarted.md": "GettingStartedTests.swift",
        "ScopesAndExplain.md": "ScopesAndExplainTests.swift",
        "Drafts.md": "DraftsTests.swift",
    ]

    /// The ```swift blocks of a page, each as its lines.
    static func swiftBlocks(of page: String) throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in try String(contentsOf: catalog.appending(path: page), encoding: .utf8).components(separatedBy: "\n") {
            if let lines = current {
                if line == "```" {
                    blocks.append(lines)
                    current = nil
                } else {
                    current = lines + [line]
                }
            } else if line == "```swift" {
                current = []
            }
        }
        return blocks
    }

    /// Lines without their indentation, joined, between newlines: a block is in a file when its
    /// text is in the file's.
    static func unindented(_ lines: [String]) -> String {
        "\n" + lines.map { String($0.drop { $0 == " " }) }.joined(separator: "\n") + "\n"
    }

    @Test func everyPageHasAMirror() throws {
        let pages = try FileManager.default.contentsOfDirectory(atPath: Self.catalog.path).filter { $0.hasSuffix(".md") }
        #expect(Set(pages) == Set(Self.mirrors.keys))
    }

    @Test(arguments: mirrors.keys.sorted())
    func everyBlockIsInItsMirror(_ page: String) throws {
        let mirror = Self.root.appending(path: "Tests/DocumentationTests").appending(path: try #require(Self.mirrors[page]))
        let code = Self.unindented(try String(contentsOf: mirror, encoding: .utf8).components(separatedBy: "\n"))
        let blocks = try Self.swiftBlocks(of: page)
        #expect(!blocks.isEmpty)
        for block in blocks {
            #expect(code.contains(Self.unindented(block)), "not in \(mirror.lastPathComponent):\n\(block.joined(separator: "\n"))")
        }
    }
}
