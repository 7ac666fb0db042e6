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

    /// Runs `executable` to its end. Its output goes to temp files, not pipes: reading a pipe to
    /// its end waits for every process that holds its write end.
    private static func execute(
        _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil
    ) async throws -> CommandResult {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (out, err) = (folder.appending(path: "out"), folder.appending(path: "err"))
        for file in [out, err] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let (output, errors, input) = (try FileHandle(forWritingTo: out), try FileHandle(forWritingTo: err), Pipe())
        let child: ChildProcess
        do {
            defer {
                for handle in [output, errors, input.fileHandleForReading] { try? handle.close() }
            }
            child = try ChildProcess(
                executable.path, arguments, environment: environment,
                standardInput: .descriptor(input.fileHandleForReading.fileDescriptor),
                standardOutput: .descriptor(output.fileDescriptor), standardError: .descriptor(errors.fileDescriptor))
        }
        try await onOwnThread {
            if let stdin {
                // A program that ends without reading all of its input closes the pipe (EPIPE):
                // what it did not read is its business, not a failure of the test's harness.
                try? input.fileHandleForWriting.write(contentsOf: stdin)
            }
            try input.fileHandleForWriting.close()
        }
        let status = await child.waitForExit()
        return CommandResult(
            status: status, stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
    }

    /// stdout without the final newline.
    public var output: String { stdout.trimmingCharacters(in: .newlines) }
}
