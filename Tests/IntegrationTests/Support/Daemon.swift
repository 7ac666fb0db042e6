import Foundation
import PrefsClient
import PrefsKit
import PrefsSocket
import TestHarness
import Testing

/// A real `prefsd` for one test: its own temp folder, database and socket; stopped and removed
/// at the end. Also runs the real `prefsctl` against it.
final class Daemon {
    let folder: URL
    let databasePath: String
    let socketPath: String
    let arguments: [String]
    /// The PostgreSQL database the daemon serves, instead of its SQLite file.
    let postgresURL: String?
    /// Variables the daemon's process gets beyond the test's own (a debug build's faults,
    /// `PREFSD_DEBUG_EXIT_AFTER_COMMITS`); the next ``start()`` takes a change.
    var environment: [String: String]
    private(set) var process: ChildProcess?

    /// Whether prefsd finds its database and socket itself (its defaults, under the folder's
    /// `state` and `run` as `XDG_STATE_HOME` and `XDG_RUNTIME_DIR`) rather than being told.
    let usesDefaultPaths: Bool

    /// Starts a daemon with extra `arguments` and `environment`, on a SQLite file in its folder or
    /// on the PostgreSQL database at `postgresURL`, waiting until it answers. With
    /// `defaultPaths`, its command line names neither database nor socket, and it finds both
    /// where it does for a user: under `XDG_STATE_HOME` and `XDG_RUNTIME_DIR`, set to the
    /// folder's `state` and `run`.
    init(
        arguments: [String] = [], folder: URL? = nil, postgresURL: String? = nil, environment: [String: String] = [:],
        defaultPaths: Bool = false
    ) async throws {
        let folder = folder ?? URL(fileURLWithPath: "/tmp/prefsd-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        usesDefaultPaths = defaultPaths
        self.arguments = arguments
        self.postgresURL = postgresURL
        self.environment = environment
        if defaultPaths {
            let (state, runtime) = (folder.appending(path: "state"), folder.appending(path: "run"))
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            self.environment["XDG_STATE_HOME"] = state.path
            self.environment["XDG_RUNTIME_DIR"] = runtime.path
            databasePath = state.appending(path: "prefsd/prefs.sqlite").path
            socketPath = runtime.appending(path: "prefsd/prefsd.sock").path
        } else {
            databasePath = folder.appending(path: "prefs.sqlite").path
            socketPath = folder.appending(path: "prefsd.sock").path
        }
        try await start()
    }

    /// A daemon that also listens on a free loopback port: `start` starts it with the port it is
    /// given. The port is free when picked, but another test (or any connection's ephemeral port)
    /// may take it before the daemon binds it; then the daemon refuses to start, and `start` is
    /// called again with another, up to three times. `start` makes whatever the daemon needs
    /// afresh each time: a daemon that failed to start removed its folder.
    static func onFreePort(_ start: (UInt16) async throws -> Daemon) async throws -> (daemon: Daemon, port: UInt16) {
        for attempt in 1...3 {
            let port = LoopbackTCP.freePort()
            do {
                return (try await start(port), port)
            } catch where attempt < 3 && "\(error)".contains("already in use") {
                continue
            }
        }
        preconditionFailure("the last attempt returns or throws")
    }

    /// A daemon still running gets SIGTERM at once; waiting for it to exit and removing its
    /// folder happen in the background (a deinit cannot await, and must not block a thread of
    /// the concurrency pool), and the test run waits for them as it exits.
    deinit {
        let folder = folder
        guard let process, process.isRunning else {
            try? FileManager.default.removeItem(at: folder)
            return
        }
        process.send(SIGTERM)
        Stopping.group.enter()
        Task {
            await process.stop()
            try? FileManager.default.removeItem(at: folder)
            Stopping.group.leave()
        }
    }

    /// The `prefsd` command line this daemon runs with.
    var commandLine: [String] {
        let database = postgresURL.map { ["--postgres", $0] } ?? (usesDefaultPaths ? [] : ["--db", databasePath])
        return database + (usesDefaultPaths ? [] : ["--socket", socketPath]) + ["--log-level", "warning"] + arguments
    }

    /// Starts the daemon and waits (up to 20 s) until its socket answers.
    func start() async throws {
        // The test's environment without prefsd's own variables (which would move its paths),
        // and this daemon's.
        var inherited = ProcessInfo.processInfo.environment
        inherited["PREFSD_SOCKET"] = nil
        inherited["PREFSD_DB"] = nil
        // A file, not a pipe, that the issues of a failing test can quote.
        let log = folder.appending(path: "prefsd.stderr")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let errors = try FileHandle(forWritingTo: log)
        defer { try? errors.close() }
        let process = try ChildProcess(
            CommandResult.binaries.appending(path: "prefsd").path, commandLine, environment: inherited.merging(environment) { $1 },
            standardError: .descriptor(errors.fileDescriptor))
        self.process = process
        let client = PrefsClient(transport: UnixSocketTransport(socketPath: socketPath))
        try await waitUntil("prefsd answers on \(socketPath)") {
            if (try? await client.status()) != nil { return true }
            guard process.isRunning else {
                let message = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw PrefsError(.unavailable, "prefsd exited with \(process.exitStatus ?? -1): \(message)")
            }
            return false
        }
    }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    func stop() async -> Int32 {
        guard let process else { return -1 }
        self.process = nil
        return await process.stop()
    }

    /// Runs `body` with a daemon on a fresh PostgreSQL database of its own; stops the daemon,
    /// then drops the database.
    static func onPostgres<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (Daemon) async throws -> T
    ) async throws -> T {
        try await withPostgresDatabase { database in
            let daemon = try await Daemon(postgresURL: database.url)
            return try await withCleanup { try await body(daemon) } cleanup: { _ = await daemon.stop() }
        }
    }

    /// SIGTERM, then expects a clean exit (status 0); if not, the issue carries what the daemon
    /// wrote to its standard error.
    func expectCleanStop(sourceLocation: SourceLocation = #_sourceLocation) async {
        let status = await stop()
        #expect(status == 0, "prefsd exited with \(status); its standard error:\n\(standardError)", sourceLocation: sourceLocation)
    }

    /// What the daemon has written to its standard error so far (its last 6000 characters), for
    /// an issue to carry.
    var standardError: String {
        String(((try? String(contentsOf: folder.appending(path: "prefsd.stderr"), encoding: .utf8)) ?? "").suffix(6000))
    }

    /// Waits until the daemon ends by itself (a debug build's fault ends it); returns its exit
    /// status.
    @discardableResult
    func exited() async -> Int32 {
        guard let process else { return -1 }
        self.process = nil
        return await process.waitForExit()
    }

    /// SIGKILL, like a crash; then waits.
    func kill() async {
        guard let process else { return }
        self.process = nil
        await process.stop(signal: SIGKILL)
    }

    /// A client as an application makes one: `PrefsClient(socketPath:)`.
    var client: PrefsClient { PrefsClient(socketPath: socketPath) }

    /// Sends one raw request (for bad-input tests) and returns the status and decoded error code.
    func raw(_ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = []) async throws -> (
        status: Int, code: String?, body: String
    ) {
        let response = try await UnixSocketTransport(socketPath: socketPath).send(
            HTTPRequestSpec(method: method, target: target, body: body.map { Data($0.utf8) }, headers: headers))
        let code = (try? JSONDecoder().decode(ErrorBody.self, from: response.body))?.error.code
        return (response.status, code, String(decoding: response.body, as: UTF8.self))
    }

    /// Runs `prefsctl ARGS` against this daemon.
    func prefsctl(_ arguments: String...) async throws -> CommandResult {
        try await prefsctl(arguments)
    }

    /// Runs `prefsctl ARGS` against this daemon.
    func prefsctl(_ arguments: [String]) async throws -> CommandResult {
        try await CommandResult.run("prefsctl", ["--socket", socketPath] + arguments)
    }
}

/// Daemons that `Daemon.deinit` is still stopping. The test process waits for them (10 s at
/// most) when it exits — on its main thread, with every test done — so no daemon outlives the
/// run and no folder stays behind.
private enum Stopping {
    static let group: DispatchGroup = {
        atexit { _ = Stopping.group.wait(timeout: .now() + 10) }
        return DispatchGroup()
    }()
}
