#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket
import PrefsClientCore

/// A blocking keep-alive HTTP/1.1 connection to the daemon's socket (or its TCP listener): the
/// leanest possible client, so the benchmark measures the daemon rather than the client.
final class BenchConnection {
    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var pending: [UInt8] = []

    init(socketPath: String, receiveBuffer: Int32? = nil) throws {
        descriptor = try connectUnixSocket(socketPath, receiveBuffer: receiveBuffer)
    }

    /// A connection to the daemon's TCP listener at 127.0.0.1:`port`.
    init(tcpPort port: UInt16) throws {
        do {
            descriptor = try LoopbackTCP.descriptor(connectedTo: port)
        } catch {
            throw BenchError("cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(error.code)))")
        }
    }

    deinit { close(descriptor) }

    /// Sends a request without waiting for the answer; `headers` are whole header lines.
    func send(_ method: String, _ target: String, body: String? = nil, headers: [String] = []) {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: prefsd\r\n"
        for header in headers { text += header + "\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { text += "\r\n" }
        _ = text.withCString { Glibc.send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Sends raw bytes.
    func write(_ data: Data) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return }
                offset += sent
            }
        }
    }

    /// Reads an answer's head, then counts (and drops) its `Content-Length` body; returns the bytes read.
    func readAndDiscardBody() throws -> Int {
        let head = try readHead()
        var received = pending.count
        pending.removeAll()
        let length = head.length
        while received < length {
            let count = buffer.withUnsafeMutableBytes { UnixSocket.receive(descriptor, into: $0.baseAddress!, count: $0.count) }
            guard count > 0 else { throw BenchError("the download ended early") }
            received += count
        }
        return received
    }

    /// Sends a request and reads its answer; returns the status.
    @discardableResult
    func request(_ method: String, _ target: String, body: String? = nil, headers: [String] = []) throws -> Int {
        send(method, target, body: body, headers: headers)
        return try readResponse()
    }

    /// Sends a request and returns its answer's body as text.
    func requestBody(_ method: String, _ target: String, body: String? = nil) throws -> String {
        send(method, target, body: body)
        return try requestBodyOfPending()
    }

    /// Reads the answer to a request already sent, and returns its body as text.
    func requestBodyOfPending() throws -> String {
        var body = ""
        _ = try readResponse(body: &body)
        return body
    }

    /// Sends a request and returns its answer as it came: head, empty line and body.
    func answerBytes(_ method: String, _ target: String) throws -> Data {
        send(method, target)
        let head = try readHead()
        while pending.count < head.length { try fill() }
        defer { pending.removeFirst(head.length) }
        return Data(head.bytes) + Data("\r\n\r\n".utf8) + Data(pending[..<head.length])
    }

    /// Reads one Content-Length-framed answer.
    func readResponse() throws -> Int {
        var ignored = ""
        return try readResponse(body: &ignored)
    }

    private func readResponse(body: inout String) throws -> Int {
        let head = try readHead()
        while pending.count < head.length { try fill() }
        body = String(decoding: pending[..<head.length], as: UTF8.self)
        pending.removeFirst(head.length)
        return head.status
    }

    /// Reads an answer's head, leaving what follows it in `pending`: its status and Content-Length,
    /// and its bytes (without the empty line). Byte by byte, so that the client costs the
    /// benchmark as little as redis's does.
    private func readHead() throws -> (status: Int, length: Int, bytes: ArraySlice<UInt8>) {
        var scanned = 0
        while true {
            while scanned + 3 < pending.count {
                if pending[scanned] == 13, pending[scanned + 1] == 10, pending[scanned + 2] == 13, pending[scanned + 3] == 10 {
                    let head = pending[..<scanned]
                    pending.removeFirst(scanned + 4)
                    return (
                        Self.number(in: head, after: Array("HTTP/1.1 ".utf8)), Self.number(in: head, after: Array("\r\ncontent-length:".utf8)),
                        head
                    )
                }
                scanned += 1
            }
            try fill()
        }
    }

    /// The decimal number after `marker` (matched without regard to case) in `head`, or 0.
    private static func number(in head: ArraySlice<UInt8>, after marker: [UInt8]) -> Int {
        guard head.count >= marker.count else { return 0 }
        for start in head.startIndex...(head.endIndex - marker.count)
        where zip(head[start...], marker).allSatisfy({ lowercased($0) == lowercased($1) }) {
            var value = 0
            for byte in head[(start + marker.count)...].drop(while: { $0 == 32 }) {
                guard byte >= 48, byte <= 57 else { break }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        return 0
        func lowercased(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
    }

    /// Reads one line of a streamed body (an SSE line), without its newline.
    func readLine() throws -> String {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            try fill()
        }
    }

    private func fill() throws {
        let count = buffer.withUnsafeMutableBytes { UnixSocket.receive(descriptor, into: $0.baseAddress!, count: $0.count) }
        guard count > 0 else { throw BenchError("the daemon closed the connection") }
        pending.append(contentsOf: buffer[0..<count])
    }
}

/// A connected blocking Unix stream socket's descriptor.
func connectUnixSocket(_ path: String, receiveBuffer: Int32? = nil) throws -> Int32 {
    do {
        return try UnixSocket.descriptor(connectedTo: path, receiveBuffer: receiveBuffer)
    } catch {
        throw BenchError("cannot connect to \(path): \(String(cString: strerror(error.code)))")
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
