import Foundation
import Synchronization

/// A line on stderr that follows a transfer, redrawn in place: `attach: 12.3 MiB / 50.0 MiB (24%)`.
/// Only for a person watching: there is none when stderr is not a terminal, nor with `--json`.
final class TransferProgress: Sendable {
    private struct State {
        var done: Int64 = 0
        var lastDrawn: ContinuousClock.Instant?
    }

    private let label: String
    private let total: Int64
    private let state = Mutex(State())

    /// A progress line for `label` (the verb) over `total` bytes, or nil if nobody would see it.
    init?(_ label: String, total: Int64, json: Bool) {
        guard !json, isatty(STDERR_FILENO) == 1 else { return nil }
        self.label = label
        self.total = total
    }

    /// Counts `count` more bytes; redraws at most ten times a second, and at the end.
    func advance(by count: Int) {
        state.withLock { state in
            state.done += Int64(count)
            let now = ContinuousClock.now
            if let lastDrawn = state.lastDrawn, now - lastDrawn < .milliseconds(100), state.done < total { return }
            state.lastDrawn = now
            let percent = total > 0 ? state.done * 100 / total : 100
            Self.write("\r\(label): \(Output.byteCount(state.done)) / \(Output.byteCount(total)) (\(percent)%)\u{1B}[K")
        }
    }

    /// Ends the line, so that what is printed next starts on a line of its own.
    func finish() {
        state.withLock { state in
            if state.lastDrawn != nil { Self.write("\n") }
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
