import ArgumentParser
import Foundation
import PrefsClientCore
import PrefsKit

extension DraftsCommand {
    struct Attach: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Attach a file to a draft and print the attachment's id.",
            discussion: """
                The file is streamed, never read whole. Its type is the image format its first bytes show \
                (PNG, JPEG, GIF, WebP; with its size in pixels), else the one its name suggests. \
                A --kind that its type or bytes contradict (--kind image on a text file) is refused.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @Argument(help: "The file.") var file: String
        @Option(help: "A description for people who cannot see it.") var alt: String?
        @Option(help: "What it is (default: from its type).") var kind: Attachment.Kind?
        @OptionGroup var revision: RevisionOption

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.draftID(matching: id)
            let upload = try FileUpload(path: file)
            let result: AttachmentResult
            do {
                let progress = TransferProgress("attach", total: upload.size, json: global.json)
                defer { progress?.finish() }
                result = try await client.addAttachment(
                    to: draft, AttachmentUpload(filename: (file as NSString).lastPathComponent, kind: kind, altText: alt),
                    ifRevision: revision.ifRevision, length: upload.size
                ) {
                    // Read anew from the start if the upload is sent again after its answer was lost.
                    try FileUpload(path: file).bytes(reporting: progress.map { progress in { @Sendable count in progress.advance(by: count) } })
                }
            }
            if global.json { return Output.json(result) }
            print(result.attachment.id.uuidString)
        }
    }

    struct Detach: DraftsVerb {
        static let configuration = CommandConfiguration(abstract: "Remove an attachment from a draft.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @Argument(help: "The attachment.") var attachment: String
        @OptionGroup var revision: RevisionOption

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.draftID(matching: id)
            let updated = try await client.removeAttachment(
                try await client.attachmentID(matching: attachment, of: draft), of: draft, ifRevision: revision.ifRevision)
            if global.json { Output.json(updated) }
        }
    }

    struct EditAttachment: DraftsVerb {
        static let configuration = CommandConfiguration(
            commandName: "edit-attachment", abstract: "Change an attachment's alt text or its place among the draft's attachments.",
            discussion: "An empty --alt removes the alt text. Moving an attachment renumbers the others.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @Argument(help: "The attachment.") var attachment: String
        @Option(help: "Its new description for people who cannot see it.") var alt: String?
        @Option(help: "Its new place among the draft's attachments, from 0.") var position: Int?
        @OptionGroup var revision: RevisionOption

        func validate() throws {
            if patch == AttachmentPatch() { throw ValidationError("Nothing to change: give --alt or --position.") }
        }

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.draftID(matching: id)
            let result = try await client.updateAttachment(
                try await client.attachmentID(matching: attachment, of: draft), of: draft, patch,
                ifRevision: revision.ifRevision)
            if global.json { Output.json(result) }
        }

        /// The change the options ask for.
        private var patch: AttachmentPatch {
            AttachmentPatch(altText: .removingWhenEmpty(alt), position: position.map { .set($0) } ?? .unchanged)
        }
    }

    struct Fetch: DraftsVerb {
        static let configuration = CommandConfiguration(
            abstract: "Save an attachment's bytes to a file.",
            discussion: "They are written to FILE.partial as they arrive, which becomes FILE once complete.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The draft.") var id: String
        @Argument(help: "The attachment.") var attachment: String
        @Option(name: .shortAndLong, help: "The file to write.") var output: String

        func execute(_ client: PrefsClient) async throws {
            let draft = try await client.draftID(matching: id)
            let download = try await client.attachmentData(
                try await client.attachmentID(matching: attachment, of: draft), of: draft)
            do {
                let progress = TransferProgress("fetch", total: download.attachment.byteSize, json: global.json)
                defer { progress?.finish() }
                try await Self.save(download.bytes, to: output, progress: progress)
            }
            if global.json { Output.json(download.attachment) }
        }

        /// Writes `bytes` to `path.partial` as they arrive, then renames it to `path`: the file
        /// appears only whole. The partial file is removed if the transfer fails.
        private static func save(
            _ bytes: AsyncThrowingStream<Data, any Error>, to path: String, progress: TransferProgress?
        ) async throws {
            let partial = path + ".partial"
            guard FileManager.default.createFile(atPath: partial, contents: nil),
                let handle = FileHandle(forWritingAtPath: partial)
            else {
                throw PrefsError(.invalidRequest, "Cannot write \(partial): is its folder there, and writable?")
            }
            do {
                defer { try? handle.close() }
                for try await piece in bytes {
                    try Self.writing(partial) { try handle.write(contentsOf: piece) }
                    progress?.advance(by: piece.count)
                }
                try Self.writing(partial) { try handle.synchronize() }
                guard rename(partial, path) == 0 else {
                    throw PrefsError(.invalidRequest, "Cannot rename \(partial) to \(path): \(String(cString: strerror(errno))).")
                }
            } catch {
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
        }

        /// Runs a write to `path`, reporting its failure (a full disk…) as a ``PrefsError``.
        private static func writing(_ path: String, _ write: () throws -> Void) throws {
            do {
                try write()
            } catch {
                throw PrefsError(.invalidRequest, "Writing \(path) failed: \(error.localizedDescription)")
            }
        }
    }
}
