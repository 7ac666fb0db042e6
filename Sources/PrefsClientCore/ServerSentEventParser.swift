import Foundation

/// Splits a text/event-stream body into events (`id:`, `event:`, `data:` fields ended by a
/// blank line), as bytes arrive in arbitrary pieces. Comment lines (`: …`) are skipped.
struct ServerSentEventParser {
    /// One event's fields.
    struct Event: Equatable {
        var id: String?
        var event: String?
        var data: String
    }

    private var pending = Data()
    private var current = Event(id: nil, event: nil, data: "")
    private var hasData = false

    /// Adds bytes; returns the events they complete.
    mutating func consume(_ bytes: Data) -> [Event] {
        pending.append(bytes)
        var events: [Event] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
            pending.removeSubrange(pending.startIndex...newline)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty {
                if hasData || current.event != nil { events.append(current) }
                current = Event(id: nil, event: nil, data: "")
                hasData = false
                continue
            }
            if line.hasPrefix(":") { continue }
            let (field, value) = Self.split(line)
            switch field {
            case "id": current.id = value
            case "event": current.event = value
            case "data":
                current.data += hasData ? "\n" + value : value
                hasData = true
            default: break
            }
        }
        return events
    }

    private static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.hasPrefix(" ") { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }
}
