/// The values of an endpoint's `{name}` path segments for one request, percent-decoded, looked
/// up by name. A path has two at most, so a look-up is a scan: no dictionary to hash into and
/// grow for every request.
struct PathParameters: Sendable {
    private var values: [(name: String, value: String)] = []

    /// No parameters.
    init() {}

    /// Adds `value` of the parameter `name`.
    mutating func append(_ name: String, _ value: String) {
        values.append((name, value))
    }

    /// The value of the parameter `name`, if the path has it.
    subscript(name: String) -> String? {
        values.first { $0.name == name }?.value
    }
}
