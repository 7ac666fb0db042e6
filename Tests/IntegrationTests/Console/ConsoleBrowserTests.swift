import Foundation
import PrefsKit
import TestHarness
import Testing

/// The console in a real headless browser: Debian's `chromium`, driven through `chromedriver` by
/// `python3-selenium` (`Scripts/console-test.py`), against a real daemon — signing in, browsing,
/// explaining, editing (stale saves too), following changes live, history, the sync page (a
/// conflict's loser put back; a device daemon's status), drafts, export and import, a read-only
/// session, and no Content-Security-Policy violation. `.ci/run` installs the browser; on CI the
/// test fails, not skips, without it.
@Suite("The console in a headless browser", .timeLimit(.minutes(5)))
struct ConsoleBrowserTests {
    static let script = Checkout.url("Scripts/console-test.py").path

    /// Whether the browser and its driver are installed, as `.ci/run` installs them.
    static let browserIsThere = ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    /// Whether the test runs: the browser is there, or this is CI (where it must run).
    static let runs = browserIsThere || ProcessInfo.processInfo.environment["CI"] == "true"

    @Test(.enabled(if: runs)) func theConsoleWorksInARealBrowser() async throws {
        #expect(Self.browserIsThere, "chromium and chromium-driver are not installed: .ci/run installs them")
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken")
        try await TokenAccessTests.waitForListener(port, token: "file-t0ken")
        // A device of it, with a console of its own: its sync page shows where its sync stands.
        let created = try await daemon.prefsctl("token", "create", "console-device", "--role", "writer", "--scope", "/accounts/alice")
        #expect(created.status == 0, "\(created.stderr)")
        let deviceSecret = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let (_, deviceTokenFile) = try TCPListenerTests.folder(holdingToken: deviceSecret)
        let (device, devicePort) = try await TCPListenerTests.daemon(
            token: "device-t0ken", arguments: ["--upstream", "http://127.0.0.1:\(port)", "--upstream-token-file", deviceTokenFile])
        try await TokenAccessTests.waitForListener(devicePort, token: "device-t0ken")
        // Screenshots go to PREFSD_CONSOLE_SCREENSHOTS (docs/console/ when README's are retaken).
        let screenshots = ProcessInfo.processInfo.environment["PREFSD_CONSOLE_SCREENSHOTS"] ?? daemon.folder.appending(path: "screenshots").path
        let result = try await CommandResult.runTool(
            "/usr/bin/python3",
            [
                Self.script, "--url", "http://127.0.0.1:\(port)", "--socket", daemon.socketPath,
                "--prefsctl", CommandResult.binaries.appending(path: "prefsctl").path,
                "--token-file", daemon.folder.appending(path: "token").path, "--screenshots", screenshots,
                "--device-url", "http://127.0.0.1:\(devicePort)", "--device-token-file", device.folder.appending(path: "token").path,
            ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("ok - ") && !result.stdout.contains("FAIL - "), "\(result.stdout)")
        await device.expectCleanStop()
        await daemon.expectCleanStop()
    }
}
