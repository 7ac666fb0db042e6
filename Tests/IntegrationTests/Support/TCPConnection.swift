import Foundation

/// A keep-alive HTTP/1.1 connection to the TCP listener, one request at a time, each with a
/// bearer token: what a program using a named token does.
final class TCPConnection {
    private let socket: RawSocket
    /// What arrived after the last answer read (nothing, as requests go one at a time).
    private var pending = Data()
    /// The status line and header fields of the last answer read.
    private(set) var lastHead = ""

    /// A connection to 127.0.0.1:`port`.
    init(port: UInt16) throws {
        socket = try RawSocket(tcpPort: port)
    }

    /// Sends a request and reads its whole answer (`Content-Length` framed, or chunked); the
    /// connection stays open. Status 0 if the daemon closed the connection instead of answering.
    func request(
        _ method: String, _ target: String, token: String?, body: String? = nil, headers: [(String, String)] = []
    ) async -> (status: Int, body: String) {
        await request(method, target, token: token, data: body.map { Data($0.utf8) }, headers: headers)
    }

    /// ``request(_:_:token:body:headers:)`` with a body of any bytes.
    func request(
        _ method: String, _ target: String, token: String?, data body: Data?, headers: [(String, String)] = []
    ) async -> (status: Int, body: String) {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        socket.send(Data((head + "\r\n").utf8) + (body ?? Data()))
        return await readAnswer()
    }

    private func readAnswer() async -> (status: Int, body: String) {
        let separator = Data("\r\n\r\n".utf8)
        while pending.range(of: separator) == nil {
            guard case .data(let data) = await socket.receive() else { return (0, "") }
            pending.append(data)
        }
        let headEnd = pending.range(of: separator)!
        let head = String(decoding: pending[..<headEnd.lowerBound], as: UTF8.self)
        lastHead = head
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = head.split(separator: "\r\n").compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        var rest = Data(pending[headEnd.upperBound...])
        if head.lowercased().contains("\r\ntransfer-encoding: chunked") {
            pending = rest
            return (status, String(decoding: await readChunks(), as: UTF8.self))
        }
        while rest.count < length {
            guard case .data(let data) = await socket.receive() else { break }
            rest.append(data)
        }
        pending = rest.count > length ? Data(rest[length...]) : Data()
        return (status, String(decoding: rest.prefix(length), as: UTF8.self))
    }

    /// A chunked body from ``pending`` on, to its last chunk; what follows stays pending.
    private func readChunks() async -> Data {
        var body = Data()
        let lineEnd = Data("\r\n".utf8)
        while true {
            while pending.range(of: lineEnd) == nil {
                guard case .data(let data) = await socket.receive() else { return body }
                pending.append(data)
            }
            let sizeEnd = pending.range(of: lineEnd)!
            let size = Int(String(decoding: pending[..<sizeEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
            // The chunk and its line end (for the last, the empty trailer's).
            let needed = sizeEnd.upperBound - pending.startIndex + size + 2
            while pending.count < needed {
                guard case .data(let data) = await socket.receive() else { return body }
                pending.append(data)
            }
            body.append(pending[sizeEnd.upperBound..<(sizeEnd.upperBound + size)])
            pending = Data(pending.dropFirst(needed))
            if size == 0 { return body }
        }
    }
}
