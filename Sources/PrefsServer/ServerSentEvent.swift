import Foundation
import PrefsKit

/// The text/event-stream encoding of watch events.
public enum ServerSentEvent {
    private static let encoder = WireJSON.encoder()

    /// `id: REVISION\nevent: KIND\ndata: JSON\n\n`.
    public static func encode(_ event: ChangeEvent) -> Data {
        let json = (try? encoder.encode(event)) ?? Data("{}".utf8)
        var data = Data("id: \(event.revision)\nevent: \(event.kind.rawValue)\ndata: ".utf8)
        data.append(json)
        data.append(contentsOf: "\n\n".utf8)
        return data
    }

    /// A final `error` event carrying the error body.
    public static func encode(_ error: PrefsError) -> Data {
        let json = (try? encoder.encode(ErrorBody(error))) ?? Data("{}".utf8)
        var data = Data("event: error\ndata: ".utf8)
        data.append(json)
        data.append(contentsOf: "\n\n".utf8)
        return data
    }
}
