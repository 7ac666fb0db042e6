/// An endpoint's path, `/v1/drafts/{draft}/attachments/{attachment}`: literal segments, and
/// `{name}` segments that match any one segment and name it.
struct EndpointPath: Sendable {
    /// One segment of the template.
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The template as written.
    let template: String
    let segments: [Segment]

    init(_ template: String) {
        self.template = template
        segments = template.split(separator: "/").map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}")
                ? .parameter(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
    }

    /// The parameters of `segments` (a request path's, already percent-decoded) if it matches;
    /// nil otherwise.
    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, given) in zip(segments, path) {
            switch segment {
            case .literal(let literal) where literal == given: continue
            case .literal: return nil
            case .parameter(let name): parameters[name] = given
            }
        }
        return parameters
    }
}
