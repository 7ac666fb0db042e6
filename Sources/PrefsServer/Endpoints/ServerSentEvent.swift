import Foundation
import HTTPTypes
import PrefsKit

/// The text/event-stream encoding of watch events.
package enum ServerSentEvent {
    private static let encoder = WireJSON.encoder()

    /// A watch answer's own header fields. The connection closes when the stream ends
    /// (`overflow`, `shutdown`), and says so up front: a pooling client must not send its next
    /// request on it.
    static let headFields = [
        HTTPField(name: .contentType, value: "text/event-stream"), HTTPField(name: .cacheControl, value: "no-cache"),
        HTTPField(name: .connection, value: "close"),
    ]

    /// The comment a watch answer opens with, once the watch is subscribed.
    static let opening = Data(": watching\n\n".utf8)

    /// `id: REVISION\nevent: KIND\ndata: JSON\n\n`.
    package static func encode(_ event: ChangeEvent) -> Data {
        let json = (try? encoder.encode(event)) ?? Data("{}".utf8)
        var data = Data("id: \(event.revision)\nevent: \(event.kind.rawValue)\ndata: ".utf8)
        data.append(json)
        data.append(contentsOf: "\n\n".utf8)
        return data
    }

    /// A final `error` event carrying the error body.
    package static func encode(_ error: PrefsError) -> Data {
        let json = (try? encoder.encode(ErrorBody(error))) ?? Data("{}".utf8)
        var data = Data("event: error\ndata: ".utf8)
        data.append(json)
        data.append(contentsOf: "\n\n".utf8)
        return data
    }
}
