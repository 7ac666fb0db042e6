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

    /// Whether `path` (a request path's segments, already percent-decoded) matches.
    func matches(_ path: [String]) -> Bool {
        guard path.count == segments.count else { return false }
        for (segment, given) in zip(segments, path) {
            if case .literal(let literal) = segment, literal != given { return false }
        }
        return true
    }

    /// The parameters of `path`, which ``matches(_:)``.
    func parameters(of path: [String]) -> PathParameters {
        var parameters = PathParameters()
        for (segment, given) in zip(segments, path) {
            if case .parameter(let name) = segment { parameters.append(name, given) }
        }
        return parameters
    }
}
