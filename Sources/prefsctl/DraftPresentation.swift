import Foundation
import PrefsKit

/// Drafts as people read them: a row of `drafts list`, the page of `drafts show`, the lines of
/// `drafts validate`.
enum DraftPresentation {
    /// The header of ``row(_:valid:)``.
    static let header = ["ID", "ACCOUNT", "THREAD/POS", "UPDATED", "TEXT", "ATT", "VALID"]

    /// The longest text summary a row shows, in characters.
    static let summaryLength = 40

    /// One draft as a row of `drafts list`.
    static func row(_ draft: Draft, valid: Bool) -> [String] {
        [
            ShortID.of(draft.id), draft.account, threadPlace(draft) ?? "-", Output.localTime(draft.updatedAt),
            syncMark(draft).map { "(\($0)) " + summary(draft.text) } ?? summary(draft.text), String(draft.attachments.count),
            valid ? "yes" : "no",
        ]
    }

    /// What sync did to the draft, when it did something a person should know: `conflicted copy
    /// of 1a2b3c4d` (they keep the version they want and delete the other), or `deleted
    /// elsewhere` (an edit here brought it back after a delete on another device).
    static func syncMark(_ draft: Draft) -> String? {
        if let original = draft.conflictOf { return "conflicted copy of \(ShortID.of(original))" }
        return draft.deletedElsewhere == true ? "deleted elsewhere" : nil
    }

    /// Prints a draft's fields, its text, its attachments and what keeps it from being valid.
    static func printDetails(_ draft: Draft, _ validation: DraftValidation) {
        Output.table([
            ["id", draft.id.uuidString],
            ["account", draft.account],
            ["thread", threadPlace(draft) ?? "-"],
            ["reply to", draft.replyTo ?? "-"],
            ["visibility", draft.visibility.rawValue],
            ["language", draft.language ?? "-"],
            ["sensitive", draft.sensitive ? "yes" : "no"],
            ["content warning", draft.contentWarning ?? "-"],
            ["poll", draft.poll.map(describe) ?? "-"],
            ["created", Output.localTime(draft.createdAt)],
            ["updated", Output.localTime(draft.updatedAt)],
            ["revision", String(draft.revision)],
            ["valid", validation.valid ? "yes" : "no"],
        ] + (syncMark(draft).map { [["sync", $0]] } ?? []))
        print()
        let lines = draft.text.isEmpty ? ["(no text)"] : draft.text.components(separatedBy: "\n")
        for line in lines { print("    " + line) }
        if !draft.attachments.isEmpty {
            print()
            Output.table(
                [["ATTACHMENT", "KIND", "TYPE", "SIZE", "PIXELS", "NAME", "ALT TEXT"]]
                    + draft.attachments.map { attachment in
                        [
                            ShortID.of(attachment.id), attachment.kind.rawValue, attachment.mimeType,
                            Output.byteCount(attachment.byteSize), pixels(attachment) ?? "-", attachment.filename,
                            attachment.altText ?? "-",
                        ]
                    })
        }
        if !validation.valid {
            print()
            for line in problemLines(validation) { print(line) }
        }
    }

    /// `1200×800`, when the attachment's size in pixels is known.
    private static func pixels(_ attachment: Attachment) -> String? {
        guard let width = attachment.width, let height = attachment.height else { return nil }
        return "\(width)×\(height)"
    }

    /// `field: message`, one line per problem.
    static func problemLines(_ validation: DraftValidation) -> [String] {
        validation.problems.map { "\($0.field): \($0.message)" }
    }

    /// `thread/position`, or nil outside a thread.
    private static func threadPlace(_ draft: Draft) -> String? {
        draft.thread.map { thread in draft.position.map { "\(thread)/\($0)" } ?? thread }
    }

    /// The text's first line, cut to ``summaryLength`` characters; `-` for no text.
    static func summary(_ text: String) -> String {
        let firstLine = text.prefix { !$0.isNewline }
        guard !firstLine.isEmpty else { return "-" }
        return firstLine.count > summaryLength ? firstLine.prefix(summaryLength - 1) + "…" : String(firstLine)
    }

    /// `a | b | c (3600 s, multiple choice)`.
    private static func describe(_ poll: Draft.Poll) -> String {
        poll.options.joined(separator: " | ") + " (\(poll.expiresIn) s\(poll.multiple ? ", multiple choice" : ""))"
    }
}
