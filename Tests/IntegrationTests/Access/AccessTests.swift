import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Who may talk to the daemon, and where it puts its files by default.
@Suite struct AccessTests {
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func aClientOfAnotherUserIsRefusedEvenWhenTheSocketIsOpenToAll() async throws {
        let daemon = try await Daemon()
        try await daemon.client.set("secret.key", to: "s3cret")
        // Loosen the file permissions on purpose: the uid check must still refuse.
        chmod(daemon.folder.path, 0o755)
        chmod(daemon.socketPath, 0o666)
        let prefsctl = CommandResult.binaries.appending(path: "prefsctl").path
        let other = try await CommandResult.runTool(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", prefsctl, "--socket", daemon.socketPath, "get", "secret.key"])
        #expect(other.status == 69)
        #expect(other.stderr.contains("accepts connections only from the user it runs as"))
        #expect(!other.stdout.contains("s3cret"))
        // The owner still gets in.
        #expect(try await daemon.prefsctl("get", "secret.key").output == "s3cret")
    }

    @Test func defaultPathsFollowXDGAndAreCreatedPrivate() async throws {
        let daemon = try await Daemon(defaultPaths: true)
        #expect(try await daemon.client.status().database == daemon.folder.appending(path: "state/prefsd/prefs.sqlite").path)
        let socketFolder = try FileManager.default.attributesOfItem(atPath: daemon.folder.appending(path: "run/prefsd").path)
        #expect((socketFolder[.posixPermissions] as? Int) == 0o700)
        let stateFolder = try FileManager.default.attributesOfItem(atPath: daemon.folder.appending(path: "state/prefsd").path)
        #expect((stateFolder[.posixPermissions] as? Int) == 0o700)
    }

    @Test(.enabled(if: getuid() == 0))
    func anExistingDefaultSocketFolderMustBeOursAndIsMadePrivate() async throws {
        let root = URL(fileURLWithPath: "/tmp/prefsd-xdg-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let runtime = root.appending(path: "run")
        let folder = runtime.appending(path: "prefsd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["PREFSD_SOCKET"] = nil
        let database = ["--db", runtime.appending(path: "prefs.sqlite").path, "--log-level", "error"]

        // Another user's folder: refused at once, nothing created in it.
        chown(folder.path, 65534, 65534)
        let refused = try await CommandResult.runTool(
            CommandResult.binaries.appending(path: "prefsd").path, database, environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("belongs to uid 65534"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        // Our own folder, left open to others: made 0700 before the socket appears.
        chown(folder.path, getuid(), getgid())
        chmod(folder.path, 0o755)
        let daemon = try await Daemon(folder: root, defaultPaths: true)
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }
}
