#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Gives back the pages of prefsd's code that only start-up used.
///
/// prefsd is one large static executable. While it starts — argument parsing, migrations, the
/// server's set-up — the kernel maps its code in (with the pages around each page touched),
/// and those pages stay counted in its resident memory long after, though a running daemon
/// never executes most of them again: about 25 MiB of clean code pages, against ~4 MiB of data
/// the daemon actually holds. Once ready, prefsd drops its code mapping's pages from its page
/// table; the code it goes on running comes back page by page from the page cache, without I/O.
/// Only the executable's code (read-only, never written) is dropped: its data pages are not
/// touched.
enum StartupPages {
    /// Drops the resident pages of the executable's code mapping.
    static func release() {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8),
            let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return }
        for line in maps.split(separator: "\n") {
            // 55d0c8a2e000-55d0cafd5000 r-xp 00000000 fd:01 1234 /path/to/prefsd
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "r-xp", fields[5...].joined(separator: " ") == executable else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
            guard bounds.count == 2, let start = UnsafeMutableRawPointer(bitPattern: bounds[0]) else { continue }
            madvise(start, Int(bounds[1] - bounds[0]), MADV_DONTNEED)
        }
    }
}
