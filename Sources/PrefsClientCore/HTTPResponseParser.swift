import Foundation

/// Reads an HTTP/1.1 response incrementally: the status line and headers, then the body
/// (fixed length, chunked, or until the connection closes), handing body bytes out as they come.
struct HTTPResponseParser {
    enum Framing {
        case length(Int)
        case chunked
        case untilClose
    }

    // Built from static text: `Data(_: some Sequence)` casts its argument at run time, and a
    // cast's first use scans every protocol conformance in the binary — a measurable share of a
    // one-shot `prefsctl get`.
    private static let headEnd = Data(staticText: "\r\n\r\n")
    private static let lineEnd = Data(staticText: "\r\n")

    private(set) var status: Int?
    private(set) var isComplete = false
    /// The head's fields, names lowercased, in order.
    private(set) var headers: [(name: String, value: String)] = []
    /// Whether the answer has a body: not one to `HEAD`, whatever its `Content-Length` says.
    private let expectsBody: Bool
    /// HTTP/1.1 without `Connection: close`: the daemon keeps the connection open after this answer.
    private var keepsAlive = false
    private var buffer = Data()
    private var framing: Framing?
    /// Bytes left in the current chunk, or nil between chunks.
    private var chunkRemaining: Int?
    /// After the last chunk: reading the trailer lines up to the empty one that ends the answer.
    private var inTrailers = false

    /// A parser of the answer to a request; `expectsBody` false for one to `HEAD`.
    init(expectsBody: Bool = true) {
        self.expectsBody = expectsBody
    }

    /// Adds received bytes; returns the body bytes they complete.
    mutating func consume(_ bytes: Data) throws -> Data {
        buffer.append(bytes)
        var body = Data()
        if status == nil {
            guard let end = buffer.firstRange(of: Self.headEnd) else { return body }
            try parseHead(String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
        }
        switch framing! {
        case .untilClose:
            body.append(buffer)
            buffer.removeAll()
        case .length(let remaining):
            let take = min(remaining, buffer.count)
            body.append(buffer.prefix(take))
            buffer.removeFirst(take)
            framing = .length(remaining - take)
            if remaining - take == 0 { isComplete = true }
        case .chunked:
            while !isComplete {
                if let remaining = chunkRemaining {
                    if remaining > 0 {
                        let take = min(remaining, buffer.count)
                        guard take > 0 else { break }
                        body.append(buffer.prefix(take))
                        buffer.removeFirst(take)
                        chunkRemaining = remaining - take
                    } else {
                        guard buffer.count >= 2 else { break }
                        buffer.removeFirst(2)  // CRLF after the chunk
                        chunkRemaining = nil
                    }
                } else {
                    guard let end = buffer.firstRange(of: Self.lineEnd) else { break }
                    let line = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex..<end.upperBound)
                    if inTrailers {
                        if line.isEmpty { isComplete = true }
                        continue
                    }
                    guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else {
                        throw HTTPParseError.malformed("bad chunk size '\(line)'")
                    }
                    if size == 0 { inTrailers = true } else { chunkRemaining = size }
                }
            }
        }
        return body
    }

    /// Whether the connection can carry the next request: this answer is complete, its body was
    /// framed (not ended by closing), nothing came after it, and the daemon keeps it open.
    var leavesConnectionReusable: Bool {
        guard isComplete, keepsAlive, buffer.isEmpty, let framing else { return false }
        if case .untilClose = framing { return false }
        return true
    }

    /// The connection closed: complete if the body runs until close.
    mutating func finish() throws {
        if case .untilClose = framing { isComplete = true }
        // The last chunk is in: only the empty line after it is missing.
        if inTrailers { isComplete = true }
        guard isComplete else { throw HTTPParseError.malformed("the connection closed mid-answer") }
    }

    private mutating func parseHead(_ head: String) throws {
        // "\r\n" is one Character, so this splits at line ends without Foundation.
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let code = Int(statusParts[1]) else {
            throw HTTPParseError.malformed("bad status line '\(lines[0])'")
        }
        status = code
        framing = .untilClose
        keepsAlive = statusParts[0] == "HTTP/1.1"
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace
            headers.append((name, String(value)))
            if name == "content-length", let length = Int(value) {
                framing = .length(length)
                if length == 0 { isComplete = true }
            } else if name == "transfer-encoding", value.lowercased().contains("chunked") {
                framing = .chunked
            } else if name == "connection", value.lowercased().contains("close") {
                keepsAlive = false
            }
        }
        // Neither the answer to `HEAD` nor a 204 or 304 has a body, whatever its head says.
        if !expectsBody || code == 204 || code == 304 {
            framing = .length(0)
            isComplete = true
        }
    }
}

extension Substring {
    /// Without the whitespace around it, as a header's value is read.
    fileprivate var trimmingWhitespace: Substring {
        let leading = drop(while: \.isWhitespace)
        return leading.dropLast(leading.reversed().prefix(while: \.isWhitespace).count)
    }
}

/// An answer that is not the HTTP the daemon speaks, or is cut short.
enum HTTPParseError: Error, CustomStringConvertible {
    case malformed(String)

    var description: String {
        switch self {
        case .malformed(let reason): "The daemon's answer is not valid HTTP: \(reason)."
        }
    }
}

extension Data {
    /// The UTF-8 bytes of `text`.
    init(staticText text: StaticString) {
        self.init(bytes: text.utf8Start, count: text.utf8CodeUnitCount)
    }
}
