#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The `Date` header's value (RFC 9110, `Sun, 06 Nov 1994 08:49:37 GMT`), formatted once a second
/// and shared by every connection.
final class HTTPDate: Sendable {
    /// The one clock every connection's answers read.
    static let shared = HTTPDate()

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private let formatted = Mutex((second: 0, text: ""))

    /// The current time's value.
    func now() -> String {
        var clock = time(nil)
        if let text = formatted.withLock({ $0.second == clock ? $0.text : nil }) { return text }
        var parts = tm()
        gmtime_r(&clock, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text = "\(Self.days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(Self.months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
        formatted.withLock { $0 = (clock, text) }
        return text
    }
}
