import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

/// `prefsctl drafts list | create | show | edit | delete | validate | attach | detach | edit-attachment | fetch | watch`
struct DraftsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drafts", abstract: "Keep drafts of posts, with their attachments, in threads.",
        discussion: """
            A draft or attachment is named by its id, or by any start of it that only one has, \
            such as the eight characters `drafts list` shows.
            """,
        subcommands: [
            List.self, Create.self, Show.self, Edit.self, Delete.self, Validate.self, Attach.self, Detach.self,
            EditAttachment.self, Fetch.self, Watch.self,
        ])

    struct List: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "List drafts by account, thread and position, with whether each can be published.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this account's drafts.") var account: String?
        @Option(help: "Only this thread's drafts.") var thread: String?

        func execute(_ client: PrefsClient) async throws {
            let drafts = try await client.drafts(account: account, thread: thread)
            if global.json { return Output.json(["drafts": drafts]) }
            var rows = [DraftPresentation.header]
            for draft in drafts {
                do {
                    rows.append(DraftPresentation.row(draft, valid: try await client.validation(of: draft.id).valid))
                } catch let error as PrefsError where error.code == .notFound {
                    continue  // deleted since it was listed
                }
            }
            Output.table(rows)
        }
    }

    struct Create: DraftsVerb {
        static let configuration = CommandConfiguration(abstract: "Create a draft and print its id.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The account it belongs to.") var account: String
        @Option(help: "Its text.") var text: String?
        @Option(help: "The thread it is part of.") var thread: String?
        @Option(help: "Its place in the thread, from 0 (default: at the end).") var position: Int?
        @Option(help: "The post it replies to.") var replyTo: String?
        @Option(name: [.customLong("cw"), .customLong("content-warning")], help: "A content warning.")
        var contentWarning: String?
        @Option(help: "Who may see it once published.") var visibility: Draft.Visibility?
        @Option(help: "Its language, such as en or pt-BR.") var language: String?
        @Flag(help: "Mark it as sensitive.") var sensitive = false
        @OptionGroup var poll: PollOptions

        func validate() throws {
            if poll.choices.isEmpty, !poll.isEmpty {
                throw ValidationError("A poll needs its choices: give each with --poll-option.")
            }
        }

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.createDraft(
                DraftInput(
                    account: account, text: text, thread: thread, position: position, replyTo: replyTo,
                    contentWarning: contentWarning, visibility: visibility, language: language, sensitive: sensitive,
                    poll: try poll.choices.isEmpty ? nil : poll.poll(changing: nil)))
            if global.json { return Output.json(draft) }
            print(draft.id.uuidString)
        }
    }

    struct Show: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Show a draft: its fields, text, attachments and whether it can be published.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.draft(try await client.draftID(matching: id))
            if global.json { return Output.json(draft) }
            DraftPresentation.printDetails(draft, try await client.validation(of: draft.id))
        }
    }

    struct Edit: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Change a draft's fields.",
            discussion: """
                An empty --cw, --language, --reply-to or --thread removes it (--thread '' takes the draft out of its thread). \
                --poll-option replaces the poll's choices; --poll-expires or --poll-multiple alone change the current poll, \
                which is read first: if the draft changes meanwhile, nothing is changed (exit 4).
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @Option(help: "Its new text.") var text: String?
        @Option(name: [.customLong("cw"), .customLong("content-warning")], help: "Its content warning.")
        var contentWarning: String?
        @Option(help: "Who may see it once published.") var visibility: Draft.Visibility?
        @Option(help: "Its language, such as en or pt-BR.") var language: String?
        @Flag(inversion: .prefixedNo, help: "Mark it as sensitive, or not.") var sensitive: Bool?
        @Option(help: "The post it replies to.") var replyTo: String?
        @Option(help: "Move it to this thread.") var thread: String?
        @Option(help: "Its new place in its thread, from 0.") var position: Int?
        @OptionGroup var poll: PollOptions
        @Flag(help: "Remove its poll.") var noPoll = false
        @OptionGroup var revision: RevisionOption

        func validate() throws {
            if noPoll, !poll.isEmpty { throw ValidationError("--no-poll removes the poll: it cannot go with --poll-… options.") }
            if patch == DraftPatch(), poll.isEmpty, !noPoll {
                throw ValidationError("Nothing to change: give at least one field, such as --text.")
            }
        }

        func execute(_ client: PrefsClient) async throws {
            let id = try await client.draftID(matching: id)
            var patch = patch
            var ifRevision = revision.ifRevision
            if noPoll {
                patch.poll = .clear
            } else if !poll.isEmpty {
                // The new poll is made from the current one: the change is based on the revision read.
                let current = try await client.draft(id)
                patch.poll = .set(try poll.poll(changing: current.poll))
                ifRevision = ifRevision ?? current.revision
            }
            let draft = try await client.updateDraft(id, patch, ifRevision: ifRevision)
            if global.json { Output.json(draft) }
        }

        /// The change the field options ask for (the poll's is made in ``execute(_:)``).
        private var patch: DraftPatch {
            var patch = DraftPatch()
            if let text { patch.text = .set(text) }
            patch.contentWarning = .removingWhenEmpty(contentWarning)
            if let visibility { patch.visibility = .set(visibility) }
            patch.language = .removingWhenEmpty(language)
            if let sensitive { patch.sensitive = .set(sensitive) }
            patch.replyTo = .removingWhenEmpty(replyTo)
            patch.thread = .removingWhenEmpty(thread)
            if let position { patch.position = .set(position) }
            return patch
        }
    }

    struct Delete: DraftsVerb {
        static let configuration = CommandConfiguration(abstract: "Delete a draft and its attachments.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @OptionGroup var revision: RevisionOption

        func execute(_ client: PrefsClient) async throws {
            let result = try await client.deleteDraft(try await client.draftID(matching: id), ifRevision: revision.ifRevision)
            if global.json { Output.json(result) }
        }
    }

    struct Validate: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Say whether a draft can be published: `valid`, or one line per problem (`field: message`).",
            discussion: """
                The limits are the compose.* preferences at the draft's account or thread. Exits 0 if the \
                draft is valid, 1 if it is not (with --json too), so that scripts can test it.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String

        func execute(_ client: PrefsClient) async throws {
            let validation = try await client.validation(of: try await client.draftID(matching: id))
            if global.json {
                Output.json(validation)
            } else {
                for line in validation.valid ? ["valid"] : DraftPresentation.problemLines(validation) { print(line) }
            }
            if !validation.valid { throw ExitCode.failure }
        }
    }

    struct Watch: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Print the changes of a draft (with its attachments and validation), a thread, or an account's drafts.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String?
        @Option(help: "Watch every draft of this thread instead.") var thread: String?
        @Option(help: "Watch every draft of this account instead.") var account: String?
        @OptionGroup var options: WatchOptions

        func validate() throws {
            if [id != nil, thread != nil, account != nil].filter({ $0 }).count != 1 {
                throw ValidationError("Name what to watch: one draft ID, --thread T or --account A.")
            }
        }

        func execute(_ client: PrefsClient) async throws {
            var draft: UUID?
            if let id { draft = try await client.draftID(matching: id) }
            try await options.follow(WatchRequest(draft: draft, thread: thread, account: account), on: client, json: global.json)
        }
    }
}

/// A `drafts` verb: it works through the daemon's client, which is a ``DraftsService``.
protocol DraftsVerb: AsyncParsableCommand {
    var global: GlobalOptions { get }
    /// The verb's work.
    func execute(_ client: PrefsClient) async throws
}

extension DraftsVerb {
    mutating func run() async throws {
        try await global.run { try await execute($0) }
    }
}

extension FieldChange<String> {
    /// An optional text field's change from its option: none when the option is not given,
    /// removal when it is empty.
    static func removingWhenEmpty(_ value: String?) -> Self {
        guard let value else { return .unchanged }
        return value.isEmpty ? .clear : .set(value)
    }
}

/// `--visibility unlisted`, `--kind image`: the wire names, listed in `--help`.
extension Draft.Visibility: ExpressibleByArgument {}
extension Attachment.Kind: ExpressibleByArgument {}
