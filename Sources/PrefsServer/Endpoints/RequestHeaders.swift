import HTTPTypes

/// A request's header fields, in order, looked up by name. A request carries a handful, so a
/// look-up is a scan: cheaper than building `HTTPFields`' index for every request on the
/// raw-bytes path.
struct RequestHeaders: Sendable {
    /// The fields, as received.
    var fields: [HTTPField]

    init(_ fields: [HTTPField] = []) {
        self.fields = fields
    }

    /// The value of the first field named `name`, if any.
    subscript(name: HTTPField.Name) -> String? {
        fields.first { $0.name == name }?.value
    }
}
