import Foundation

/// What changing an attachment takes (`PATCH /v1/drafts/{id}/attachments/{aid}`).
public struct AttachmentPatch: Codable, Sendable, Hashable {
    /// Its new alt text; `.clear` removes it.
    public var altText: FieldChange<String> = .unchanged
    /// Its new place among the draft's attachments.
    public var position: FieldChange<Int> = .unchanged

    /// A patch of the fields to change; the others stay.
    ///
    /// - Parameters:
    ///   - altText: The new alt text; `.clear` removes it.
    ///   - position: The attachment's new place among the draft's attachments.
    public init(altText: FieldChange<String> = .unchanged, position: FieldChange<Int> = .unchanged) {
        self.altText = altText
        self.position = position
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case altText, position
    }

    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "an attachment change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.altText) {
            altText = try container.decodeNil(forKey: .altText) ? .clear : .set(try container.decode(String.self, forKey: .altText))
        }
        if container.contains(.position) {
            guard !(try container.decodeNil(forKey: .position)) else {
                throw PrefsError(.invalidRequest, "An attachment's position cannot be null.")
            }
            position = .set(try container.decode(Int.self, forKey: .position))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch altText {
        case .unchanged: break
        case .clear: try container.encodeNil(forKey: .altText)
        case .set(let text): try container.encode(text, forKey: .altText)
        }
        if case .set(let position) = position { try container.encode(position, forKey: .position) }
    }
}
