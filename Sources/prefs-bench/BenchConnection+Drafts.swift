import Foundation

/// Drafts and their attachments over a bench connection, as the sections that move them use them.
extension BenchConnection {
    /// A new draft of `account` holding `text`; its ID.
    func createDraft(account: String, text: String = "") throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["account": account, "text": text])
        let created = try requestBody("POST", "/v1/drafts", body: String(decoding: body, as: UTF8.self))
        guard let answer = try? JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any], let id = answer["id"] as? String
        else { throw BenchError("cannot create a draft: \(created.prefix(300))") }
        return id
    }

    /// Uploads `size` bytes — `chunk`, over and over — as an attachment of draft `id`, streamed;
    /// the attachment's ID.
    func uploadAttachment(of id: String, repeating chunk: Data, size: Int) throws -> String {
        write(Data("POST /v1/drafts/\(id)/attachments?filename=bench.bin HTTP/1.1\r\nHost: prefsd\r\nContent-Length: \(size)\r\n\r\n".utf8))
        for _ in 0..<(size / chunk.count) { write(chunk) }
        let answer = try requestBodyOfPending()
        guard let attachment = answer.components(separatedBy: "\"id\":\"").dropFirst().first?.prefix(36) else {
            throw BenchError("the upload failed: \(answer.prefix(300))")
        }
        return String(attachment)
    }

    /// Downloads attachment `attachment` of draft `id`, dropping its bytes as they come; throws
    /// unless all `size` came.
    func downloadAttachment(_ attachment: String, of id: String, size: Int) throws {
        send("GET", "/v1/drafts/\(id)/attachments/\(attachment)/data")
        let downloaded = try readAndDiscardBody()
        guard downloaded == size else { throw BenchError("downloaded \(downloaded) of \(size) bytes") }
    }
}
