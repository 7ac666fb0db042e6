import Foundation

/// The audit log exported as CSV (RFC 4180), a line at a time under ``csvHeader``. (JSON lines are
/// each record in the API's JSON.)
extension ChangeRecord {
    /// The CSV columns, in order.
    package static let csvHeader =
        "revision,time,kind,key,scope,value,oldValue,draft,attachment,account,thread,author,agent,host,reason"

    /// The record as one CSV line (without its line break); values and old values as JSON.
    package var csvLine: String {
        let fields: [String?] = [
            String(revision), WireJSON.text(of: time), kind.rawValue, key, scope?.path, value?.canonicalText,
            oldValue?.canonicalText, draft, attachment, account, thread, author.name, author.agent, author.host, reason,
        ]
        return fields.map { Self.csvField($0 ?? "") }.joined(separator: ",")
    }

    /// `text` as a CSV field: quoted, its quotes doubled, when it holds a comma, quote or line break.
    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
