import Foundation

/// What a finished command printed and its exit status.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// The folder the built executables are in (next to the test bundle).
    public static let binaries: URL = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    /// Runs one of the built executables to its end.
    public static func run(_ name: String, _ arguments: [String], stdin: Data? = nil) async throws -> CommandResult {
        try await execute(binaries.appending(path: name), arguments, stdin: stdin)
    }

    /// Runs a program that is not one of ours to its end.
    public static func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) async throws
        -> CommandResult
    {
        try await execute(URL(fileURLWithPath: path), arguments, environment: environment)
    }

    /// Runs `executable` to its end, on a thread of its own (`onOwnThread`). Its output goes to
    /// temp files, not pipes: the write end of a pipe is inherited by whatever another test
    /// spawns at the same moment (a daemon that lives on), and reading the pipe to its end
    /// would then wait for that process too.
    private static func execute(
        _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil
    ) async throws -> CommandResult {
        try await onOwnThread {
            let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-run-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let (out, err) = (folder.appending(path: "out"), folder.appending(path: "err"))
            for file in [out, err] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let environment { process.environment = environment }
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            let input = Pipe()
            process.standardInput = input
            try process.run()
            if let stdin {
                // A program that ends without reading all of its input closes the pipe (EPIPE):
                // what it did not read is its business, not a failure of the test's harness.
                try? input.fileHandleForWriting.write(contentsOf: stdin)
            }
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            return CommandResult(
                status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
                stderr: try String(contentsOf: err, encoding: .utf8))
        }
    }

    /// stdout without the final newline.
    public var output: String { stdout.trimmingCharacters(in: .newlines) }
}

extension Process {
    /// Launches the process, on a thread of its own.
    public func start() async throws {
        try await onOwnThread { try self.run() }
    }

    /// Sends `signal` (SIGTERM unless told otherwise) if the process still runs, then waits
    /// for it to exit, on a thread of its own; returns its exit status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) async -> Int32 {
        await onOwnThread {
            if self.isRunning { kill(self.processIdentifier, signal) }
            self.waitUntilExit()
            return self.terminationStatus
        }
    }

    /// Runs `body` while the process runs: launches it first, and stops it (SIGTERM) and waits
    /// for its exit afterwards — also when `body` throws, whose error is then rethrown.
    public func whileRunning<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws
        -> T
    {
        try await start()
        return try await withCleanup(isolation: isolation, body) { await self.stop() }
    }
}
