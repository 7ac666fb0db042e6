import ArgumentParser
import Foundation
import PrefsKit

/// How prefsctl prints: JSON for machines (`--json`, dates as ISO 8601 like the HTTP API),
/// aligned text for people.
enum Output {
    private static let encoder = WireJSON.encoder(pretty: true)
    private static let lineEncoder = WireJSON.encoder()

    /// `2025-03-14 09:26`, in the local time zone.
    private static let localTimeStyle = Date.VerbatimFormatStyle(
        format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits)",
        timeZone: .current, calendar: Calendar(identifier: .gregorian))

    /// Prints a value as pretty JSON.
    static func json(_ value: some Encodable) {
        print(String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self))
    }

    /// Prints a value as one line of JSON (for streams).
    static func jsonLine(_ value: some Encodable) {
        line(String(decoding: (try? lineEncoder.encode(value)) ?? Data(), as: UTF8.self))
    }

    /// Writes one line to standard output at once (not held in a buffer), for streams.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// A value as people read it: strings bare, everything else as JSON.
    static func text(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.canonicalText
    }

    /// A moment as people read it: local date and time, to the minute.
    static func localTime(_ date: Date) -> String {
        date.formatted(localTimeStyle)
    }

    /// A size as people read it: `512 B`, `3.4 KiB`, `12.3 MiB`, `1.5 GiB`.
    static func byteCount(_ bytes: Int64) -> String {
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        for unit in ["KiB", "MiB"] {
            if value < 1024 { return String(format: "%.1f ", value) + unit }
            value /= 1024
        }
        return String(format: "%.1f GiB", value)
    }

    /// Prints rows with aligned columns; the first row is the header.
    static func table(_ rows: [[String]]) {
        guard let columns = rows.map(\.count).max() else { return }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// Prints `error` to stderr as `prefsctl: message` and exits with its status.
    static func fail(_ error: PrefsError) -> Never {
        FileHandle.standardError.write(Data("prefsctl: \(error.message)\n".utf8))
        exit(error.code.exitCode)
    }
}
