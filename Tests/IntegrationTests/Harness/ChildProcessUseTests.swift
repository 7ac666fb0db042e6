import Foundation
import Testing

/// The tests start programs through TestHarness's `ChildProcess` only: Foundation's `Process`
/// lists `/proc/self/fd` with a 256-byte copy per entry that reads past the end of its buffer,
/// which crashed a CI run (SIGSEGV) once the test process had some 1 400 descriptors open.
@Suite struct ChildProcessUseTests {
    @Test func noTestStartsAProgramThroughFoundationsProcess() throws {
        let tests = Checkout.url("Tests")
        let files = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        var offenders: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" && file.lastPathComponent != "ChildProcessUseTests.swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            if text.contains("= Process()") || text.contains("Foundation.Process(") {
                offenders.append(file.path.replacingOccurrences(of: tests.path + "/", with: ""))
            }
        }
        #expect(offenders == [], "start programs with ChildProcess (TestHarness) instead")
    }
}
