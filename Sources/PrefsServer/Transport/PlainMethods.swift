import HTTPTypes

/// The methods a plain request head may name (``PlainHead``): those of the API's endpoint
/// table, and `HEAD` where `GET` is (``API`` answers it as `GET`). A head naming another goes to
/// NIO's decoder, and the API's 405 or 404.
struct PlainMethods: Sendable {
    /// Each method with its name's bytes.
    private let methods: [(bytes: [UInt8], method: HTTPRequest.Method)]

    /// The methods of `endpoints`.
    /// - Parameter endpoints: The API's endpoint table (``Endpoints``).
    init(_ endpoints: [Endpoint]) {
        var methods: [HTTPRequest.Method] = []
        for endpoint in endpoints where !methods.contains(endpoint.method) { methods.append(endpoint.method) }
        if methods.contains(.get) { methods.append(.head) }
        self.methods = methods.map { (Array($0.rawValue.utf8), $0) }
    }

    /// The method `bytes` name, if it is one of these.
    /// - Parameter bytes: A request line's method.
    /// - Returns: The method, or nil.
    func method(_ bytes: Slice<UnsafeRawBufferPointer>) -> HTTPRequest.Method? {
        methods.first { $0.bytes.elementsEqual(bytes) }?.method
    }
}
