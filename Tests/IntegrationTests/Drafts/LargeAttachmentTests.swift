import Foundation
import PrefsClient
import PrefsKit
import SampleImages
import TestHarness
import Testing

/// A 50 MiB attachment through the real daemon and `prefsctl`, byte for byte, with the daemon's
/// resident memory staying flat: streamed, never held whole. Measures the speed, asserts no time.
@Suite struct LargeAttachmentTests {
    static let size = 50 * 1024 * 1024

    /// A process's peak resident memory so far (`VmHWM` in `/proc/PID/status`), in bytes.
    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kibibytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kibibytes * 1024
    }

    /// Writes `size` bytes to `path` — a JPEG header, then random bytes — a mebibyte at a time.
    static func writeLargeFile(_ path: String, size: Int) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? output.close() }
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? random.close() }
        let header = SampleImage.jpeg(width: 8000, height: 6000)
        try output.write(contentsOf: header)
        var left = size - header.count
        while left > 0 {
            let piece = random.readData(ofLength: min(left, 1024 * 1024))
            try output.write(contentsOf: piece)
            left -= piece.count
        }
    }

    @Test(.timeLimit(.minutes(3))) func fiftyMebibytesUpAndDownWithFlatMemory() async throws {
        let daemon = try await Daemon()
        let pid = try #require(daemon.process?.processIdentifier)
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let original = daemon.folder.appending(path: "large.jpg").path
        try Self.writeLargeFile(original, size: Self.size)
        let digest = try await DraftsCLITests.sha256(original)

        // Warm up the transfer paths with a small file, so the baseline includes what any upload needs.
        let small = daemon.folder.appending(path: "small.bin").path
        #expect(FileManager.default.createFile(atPath: small, contents: Data(count: 1024 * 1024)))
        let warm = try await daemon.prefsctl("drafts", "attach", id, small).output
        #expect(try await daemon.prefsctl("drafts", "fetch", id, warm, "-o", small + ".copy").status == 0)
        let before = try Self.peakResidentBytes(of: pid)

        let started = ContinuousClock.now
        let attached = try DraftsCLITests.decode(AttachmentResult.self, try await daemon.prefsctl("--json", "drafts", "attach", id, original))
        let uploaded = ContinuousClock.now
        let copy = daemon.folder.appending(path: "copy.jpg").path
        let fetched = try await daemon.prefsctl("drafts", "fetch", id, attached.attachment.id.uuidString, "-o", copy)
        let downloaded = ContinuousClock.now
        let after = try Self.peakResidentBytes(of: pid)

        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(attached.attachment.byteSize == Int64(Self.size))
        #expect(attached.attachment.sha256 == digest)
        #expect(try await DraftsCLITests.sha256(copy) == digest)
        #expect(attached.attachment.width == 8000 && attached.attachment.height == 6000)
        let rise = after - before
        #expect(rise < 16 * 1024 * 1024, "prefsd's peak resident memory rose by \(rise / 1024) KiB for a 50 MiB transfer")

        func rate(_ duration: Duration) -> String {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return String(format: "%.0f MB/s", Double(Self.size) / 1e6 / seconds)
        }
        print(
            "50 MiB through prefsctl and prefsd: upload \(rate(uploaded - started)), download \(rate(downloaded - uploaded)); "
                + "prefsd peak RSS \(before / 1024 / 1024) MiB before, \(after / 1024 / 1024) MiB after")
    }
}
