import Foundation
import PrefsClient
import PrefsKit
import Testing

/// A real `prefsd` for one test: its own temp folder, database and socket; stopped and removed
/// at the end. Also runs the real `prefsctl` against it.
final class Daemon {
    /// The folder the built executables are in (next to this test bundle).
    static let binaries: URL = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    let folder: URL
    let databasePath: String
    let socketPath: String
    let arguments: [String]
    private(set) var process: Process?

    /// Starts a daemon with extra `arguments`, waiting until it answers.
    init(arguments: [String] = [], folder: URL? = nil) async throws {
        let folder = folder ?? URL(fileURLWithPath: "/tmp/prefsd-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        databasePath = folder.appending(path: "prefs.sqlite").path
        socketPath = folder.appending(path: "prefsd.sock").path
        self.arguments = arguments
        try await start()
    }

    deinit {
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The `prefsd` command line this daemon runs with.
    var commandLine: [String] { ["--db", databasePath, "--socket", socketPath, "--log-level", "warning"] + arguments }

    /// Starts the daemon and waits (up to 20 s) until its socket answers.
    func start() async throws {
        let process = Process()
        process.executableURL = Self.binaries.appending(path: "prefsd")
        process.arguments = commandLine
        // A file, not a pipe: a pipe's write end is inherited by whatever another test spawns
        // at the same moment, and reading it to its end would then wait for that process.
        let log = folder.appending(path: "prefsd.stderr")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let client = PrefsClient(transport: UnixSocketTransport(socketPath: socketPath))
        for _ in 0..<400 {
            if (try? await client.status()) != nil { return }
            guard process.isRunning else {
                let message = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw PrefsError(.unavailable, "prefsd exited with \(process.terminationStatus): \(message)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PrefsError(.unavailable, "prefsd did not answer on \(socketPath)")
    }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let process else { return -1 }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    /// SIGKILL, like a crash.
    func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// A client over AsyncHTTPClient, as an application would use.
    var client: PrefsClient { PrefsClient(socketPath: socketPath) }

    /// Sends one raw request (for bad-input tests) and returns the status and decoded error code.
    func raw(_ method: String, _ target: String, body: String? = nil) async throws -> (status: Int, code: String?, body: String) {
        let response = try await UnixSocketTransport(socketPath: socketPath).send(
            HTTPRequestSpec(method: method, target: target, body: body.map { Data($0.utf8) }))
        let code = (try? JSONDecoder().decode(ErrorBody.self, from: response.body))?.error.code
        return (response.status, code, String(decoding: response.body, as: UTF8.self))
    }

    /// Runs `prefsctl ARGS` against this daemon.
    func prefsctl(_ arguments: String...) throws -> CommandResult {
        try prefsctl(arguments)
    }

    /// Runs `prefsctl ARGS` against this daemon.
    func prefsctl(_ arguments: [String]) throws -> CommandResult {
        try CommandResult.run("prefsctl", ["--socket", socketPath] + arguments)
    }
}

/// What a finished command printed and its exit status.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Runs one of the built executables and waits for it.
    static func run(_ name: String, _ arguments: [String], stdin: Data? = nil) throws -> CommandResult {
        try execute(Daemon.binaries.appending(path: name), arguments, stdin: stdin)
    }

    /// Runs a program that is not one of ours.
    static func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> CommandResult {
        try execute(URL(fileURLWithPath: path), arguments, environment: environment)
    }

    /// Runs `executable` to its end. Its output goes to temp files, not pipes: the write end of
    /// a pipe is inherited by whatever another test spawns at the same moment (a daemon that
    /// lives on), and reading the pipe to its end would then wait for that process too.
    private static func execute(_ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil)
        throws -> CommandResult
    {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (out, err) = (folder.appending(path: "out"), folder.appending(path: "err"))
        for file in [out, err] { FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8))
    }

    /// stdout without the final newline.
    var output: String { stdout.trimmingCharacters(in: .newlines) }
}
