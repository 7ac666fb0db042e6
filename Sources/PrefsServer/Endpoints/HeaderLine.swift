#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level reading of header lines, shared by the raw-bytes parser and the look-ups.
enum HeaderLine {
    /// Where the line starting at `start` of checked header lines ends (its CR), if one does: a
    /// `memchr`, as a look-up passes over every line before the one it wants.
    static func lineEnd(in lines: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < lines.count, let base = lines.baseAddress,
            let found = memchr(base + start, 0x0D, lines.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Whether `bytes` spell `lowercase` (lowercase ASCII) in any case: ASCII letters differ from
    /// their capitals only in 0x20; the other token bytes match exactly.
    static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: some Collection<UInt8>) -> Bool {
        bytes.count == lowercase.count
            && zip(lowercase, bytes).allSatisfy { $0 == $1 | ($0 >= 0x61 && $0 <= 0x7A ? 0x20 : 0) }
    }

    /// `bytes` without leading and trailing spaces and tabs (a header value's optional whitespace).
    static func trimmingSpaces(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var (start, end) = (bytes.startIndex, bytes.endIndex)
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return bytes[start..<end]
    }
}
