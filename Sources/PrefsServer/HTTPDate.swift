#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HTTPTypes

/// The `Date` header's value (RFC 9110, `Sun, 06 Nov 1994 08:49:37 GMT`), formatted once a second.
struct HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private var second = 0
    private var text = ""

    /// Gives `head` the headers Hummingbird gives every answer: `Date`, and `Server: prefsd`.
    mutating func stamp(_ head: inout HTTPResponse) {
        head.headerFields[.date] = now()
        head.headerFields[.server] = "prefsd"
    }

    /// The current time's value.
    mutating func now() -> String {
        var clock = time(nil)
        guard clock != second else { return text }
        second = clock
        var parts = tm()
        gmtime_r(&clock, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        text = "\(Self.days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
        return text
    }
}
