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
    private var stderrPipe: Pipe?

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
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        stderrPipe = pipe
        let client = PrefsClient(transport: UnixSocketTransport(socketPath: socketPath))
        for _ in 0..<400 {
            if (try? await client.status()) != nil { return }
            guard process.isRunning else {
                let message = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
        let process = Process()
        process.executableURL = Daemon.binaries.appending(path: name)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read before waiting, so a large output cannot fill the pipe and block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// stdout without the final newline.
    var output: String { stdout.trimmingCharacters(in: .newlines) }
}
