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

    /// A resolved value as people read it: the value, or `(unset)`.
    static func value(_ resolved: ResolvedPreference) -> String {
        resolved.isSet ? text(resolved.value) : "(unset)"
    }

    /// An author as people read it: `alice via prefsctl/0.1.0 (prefsctl[4242]) on db-1`.
    static func author(_ author: ChangeAuthor) -> String {
        author.name + (author.agent.map { " via \($0)" } ?? "") + (author.host.map { " on \($0)" } ?? "")
    }

    /// What a change did, as people read it: `set at /accounts/alice`, `schema`, `draft.updated 3F25…`,
    /// `token.created ci (reader) at /tenants/acme`.
    static func what(_ change: ChangeRecord) -> String {
        if let draft = change.draft { return "\(change.kind) \(draft.prefix(8))… (\(change.account ?? ""))" }
        if change.kind.isTokenChange, case .object(let token)? = change.value, case .string(let name)? = token["name"],
            case .string(let role)? = token["role"]
        {
            return "\(change.kind) \(name) (\(role))" + (change.scope.map { " at \($0.path)" } ?? "")
        }
        let key = change.key.map { " \($0)" } ?? ""
        return "\(change.kind)\(key)" + (change.scope.map { " at \($0.path)" } ?? "")
    }

    /// A moment as people read it: local date and time, to the minute.
    static func localTime(_ date: Date) -> String {
        date.formatted(localTimeStyle)
    }

    /// `1 lock`, `2 locks`, `0 values`: a count with its noun, plural unless it is one.
    static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
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

    /// Prints rows with aligned columns; the first row is the header. No line ends in spaces
    /// (when its last cells are empty).
    static func table(_ rows: [[String]]) {
        guard let columns = rows.map(\.count).max() else { return }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            let line = cells.joined(separator: "  ")
            print(line[..<(line.lastIndex { $0 != " " }.map(line.index(after:)) ?? line.startIndex)])
        }
    }

    /// Prints `error` to stderr as `prefsctl: message`, with prefsctl's own remedy where it
    /// has one, and exits with its status.
    static func fail(_ error: PrefsError) -> Never {
        let message = [error.message, remedy(for: error)].compactMap { $0 }.joined(separator: " ")
        FileHandle.standardError.write(Data("prefsctl: \(message)\n".utf8))
        exit(error.code.exitCode)
    }

    /// The prefsctl command that gets past `error`, for errors whose message (the API's, for
    /// every client) names no command: how to remove the lock that refused a write, how to
    /// register a schema for a strict daemon.
    static func remedy(for error: PrefsError) -> String? {
        switch error.code {
        case .locked:
            error.lock.map { "To remove it: prefsctl unlock \($0.key) --scope \($0.scope.path)" }
        case .unknownKey:
            "To register one: prefsctl schema load FILE"
        default:
            nil
        }
    }
}
