import Foundation
import TestHarness
import Testing

/// README's shell sessions, run as written: every ```sh block whose lines start with `$ ` is a
/// session, run in one `bash` — so that `D=$(prefsctl …)` carries on to the commands after it —
/// in a temp folder of its own, against a fresh daemon. `prefsctl` is the built one (first on
/// `PATH`, the daemon's socket in `PREFSD_SOCKET`), and a ```json or ```python block whose info
/// string names a file (```json schema.json) is written to that file in the folder first. The
/// daemon also serves OFREP on a loopback TCP port (`PREFSD_URL`), with README's template; a
/// session that runs `python3` runs the Python of the OpenFeature SDK's virtual environment
/// (`PREFSD_TEST_OPENFEATURE_PYTHON`, which `.ci/run` makes; elsewhere such a session is left out).
///
/// Each command must print exactly the lines README shows under it (stdout and stderr
/// together), and exit with the status its comment names (`# … exit 4 …`), else 0. Only what a
/// run cannot repeat is left out of the comparison, on both sides alike: ids — a UUID, or the
/// eight hex digits a table shows of one — are numbered in order of first appearance (the same
/// id twice must be the same id twice), local times (`2026-11-21 14:25`) are all one, the
/// loopback port a session's daemon listens on is README's, and how many changes a device's
/// last exchange pushed and pulled (which the background sync decides) is not compared.
@Suite struct ReadmeSessionTests {
    /// README.md at the package root.
    static let readmeURL = Checkout.url("README.md")

    /// One `$ ` command of a session: the line, what it prints, how it exits.
    struct Step: Sendable, CustomStringConvertible {
        var command: String
        var output: [String]
        var status: Int32
        var description: String { command }
    }

    /// A fenced block of README: its info string (```sh → `sh`) and lines.
    struct Block {
        var info: [Substring]
        var lines: [String]
    }

    static func blocks() throws -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for line in try String(contentsOf: readmeURL, encoding: .utf8).components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    open = Block(info: line.dropFirst(3).split(separator: " "), lines: [])
                }
            } else {
                open?.lines.append(line)
            }
        }
        return blocks
    }

    /// The sessions: each a list of steps.
    static func sessions() throws -> [[Step]] {
        try blocks().filter { $0.info.first == "sh" && $0.lines.first?.hasPrefix("$ ") == true }.map { block in
            var steps: [Step] = []
            for line in block.lines {
                if line.hasPrefix("$ ") {
                    let command = String(line.dropFirst(2))
                    steps.append(Step(command: command, output: [], status: expectedStatus(of: command)))
                } else {
                    steps[steps.count - 1].output.append(line)
                }
            }
            return steps
        }
    }

    /// The files the sessions use: name → content.
    static func files() throws -> [String: String] {
        var files: [String: String] = [:]
        for block in try blocks() where block.info.count == 2 && ["json", "python"].contains(block.info[0]) {
            files[String(block.info[1])] = block.lines.joined(separator: "\n") + "\n"
        }
        return files
    }

    /// The status a command's comment names (`# stale revision: exit 4`), else 0.
    static func expectedStatus(of command: String) -> Int32 {
        guard let comment = command.range(of: " # ").map({ command[$0.upperBound...] }),
            let match = comment.firstMatch(of: #/\bexit (\d+)\b/#), let status = Int32(match.output.1)
        else { return 0 }
        return status
    }

    /// What a run cannot repeat, made the same on both sides of a comparison: ids are numbered
    /// by first appearance in the session (`<id1>`; an id and its eight-digit start are the
    /// same id), and local times made one. An id and its placeholder have the same width on
    /// both sides, so tables stay aligned alike.
    struct Normalizer {
        private var numbers: [Substring: Int] = [:]

        mutating func callAsFunction(_ text: String) -> String {
            let uuidOrShortID = #/\b[0-9A-F]{8}(?:-[0-9A-F]{4}){3}-[0-9A-F]{12}\b|\b[0-9A-F]{8}\b/#
            let withIDs = text.replacing(uuidOrShortID) { match in
                let id = match.output.prefix(8)
                let number = numbers[id] ?? numbers.count + 1
                numbers[id] = number
                return "<id\(number)>"
            }
            return withIDs.replacing(#/\d{4}-\d\d-\d\d \d\d:\d\d/#, with: "<time>")
                .replacing(#/127\.0\.0\.1:\d+/#, with: "127.0.0.1:<port>")
                .replacing(#/pushed \d+, pulled \d+/#, with: "pushed <n>, pulled <n>")
                .replacing(#/\S+ via prefsctl\/[0-9.]+ \(prefsctl\[\d+\]\)/#, with: "<author>")
        }
    }

    /// Runs `steps` in one bash, in `folder`, against `daemon`; returns each step's output
    /// (stdout and stderr together) and status.
    static func run(_ steps: [Step], in folder: URL, against daemon: Daemon, url: String) async throws -> [(output: String, status: Int32?)] {
        // After each command, a record separator (0x1E) and its status, to split the output by.
        let script = folder.deletingLastPathComponent().appending(path: "session.sh")
        let lines = ["cd '\(folder.path)' || exit 99", "exec 2>&1"] + steps.map { "\($0.command)\nprintf '\\036%d\\n' $?" }
        try Data(lines.joined(separator: "\n").utf8).write(to: script)
        let python = OFREPTests.python.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path + ":" } ?? ""
        let environment = ProcessInfo.processInfo.environment.merging([
            "PATH": CommandResult.binaries.path + ":" + python + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "PREFSD_SOCKET": daemon.socketPath, "PREFSD_URL": url,
        ]) { $1 }
        let result = try await CommandResult.runTool("/bin/bash", ["--noprofile", "--norc", script.path], environment: environment)
        // Piece 0 is step 0's output; piece n is step n-1's status line, then step n's output.
        let pieces = result.stdout.split(separator: "\u{1E}", omittingEmptySubsequences: false)
        return steps.indices.map { index in
            let output = index == 0 ? pieces[0] : pieces[index].drop { $0 != "\n" }.dropFirst()
            let status = pieces.indices.contains(index + 1) ? Int32(pieces[index + 1].prefix { $0 != "\n" }) : nil
            return (String(output), status)
        }
    }

    @Test func readmeHasSessionsAndTheirFiles() throws {
        #expect(try Self.sessions().count >= 2)
        #expect(try Self.files()["schema.json"] != nil)
    }

    @Test(arguments: try sessions().indices)
    func sessionPrintsWhatReadmeShows(_ index: Int) async throws {
        let steps = try Self.sessions()[index]
        guard OFREPTests.sdkIsThere || !steps.contains(where: { $0.command.hasPrefix("python3 ") }) else { return }
        let (daemon, port) = try await Daemon.onFreePort { port in
            try await Daemon(arguments: ["--listen", "127.0.0.1:\(port)", "--ofrep-scope", "/tenants/{tenant}/users/{targetingKey}"])
        }
        let folder = daemon.folder.appending(path: "session")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, content) in try Self.files() {
            try Data(content.utf8).write(to: folder.appending(path: name))
        }
        var (readme, actual) = (Normalizer(), Normalizer())
        for (step, ran) in zip(steps, try await Self.run(steps, in: folder, against: daemon, url: "http://127.0.0.1:\(port)")) {
            let expected = step.output.map { $0 + "\n" }.joined()
            #expect(actual(ran.output) == readme(expected), "output of: \(step.command)")
            #expect(ran.status == step.status, "exit status of: \(step.command)")
        }
    }
}
