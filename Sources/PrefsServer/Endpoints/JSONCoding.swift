import Foundation
import NIOCore
import NIOFoundationCompat
import PrefsKit

/// The JSON coders the server uses.
enum JSONCoding {
    /// The API's encoder (``WireJSON``).
    static let encoder = WireJSON.encoder()

    /// `value` as the API's JSON (`{}` if it cannot be encoded, which the API's types always can).
    static func encoded(_ value: some Encodable) -> Data {
        (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// Decodes a request body, every number exactly (``WireJSON/decode(_:from:)``): text that is
    /// not JSON is `invalid_json`, a number that cannot be kept exactly `invalid_value`, JSON of
    /// another shape `invalid_request`.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer, what: String) throws -> T {
        do {
            return try WireJSON.decode(type, from: buffer.readableBytesView)
        } catch let error as DecodingError {
            throw PrefsError(.invalidRequest, "The body is not \(what): \(error.readableReason)")
        }
    }
}
