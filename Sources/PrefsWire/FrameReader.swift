import PrefsKit

/// Reads a stream of frames — JSON texts, one a line (NDJSON), deflated or not — from the pieces
/// a connection delivers, however they are cut.
///
/// A frame longer than the reader's limit fails the stream (`too_large`) as soon as its bytes
/// pass the limit, before they are all held; empty lines are skipped.
package struct FrameReader {
    private let inflater: Inflater?
    private let limit: Int
    private var line: [UInt8] = []

    /// A reader of frames of at most `limit` bytes each, decompressing as it reads if `deflated`.
    package init(deflated: Bool, limit: Int) {
        inflater = deflated ? Inflater() : nil
        self.limit = limit
    }

    /// The frames `piece` completes, in order; what follows the last line break waits for the
    /// next piece.
    ///
    /// - Throws: ``PrefsError`` `too_large` for a frame over the limit; `invalid_request` for a
    ///   deflated stream that is not one.
    package mutating func frames(in piece: some Collection<UInt8>) throws -> [[UInt8]] {
        var frames: [[UInt8]] = []
        if let inflater {
            try inflater.inflate(piece) { bytes in try split(bytes, into: &frames) }
        } else {
            try split(piece, into: &frames)
        }
        return frames
    }

    /// Whether bytes of an unfinished frame wait: at the stream's end, it was cut short.
    package var hasPartialFrame: Bool { !line.isEmpty }

    private mutating func split(_ bytes: some Collection<UInt8>, into frames: inout [[UInt8]]) throws {
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            try append(rest[..<newline])
            if !line.isEmpty { frames.append(line) }
            line.removeAll(keepingCapacity: true)
            rest = rest[rest.index(after: newline)...]
        }
        try append(rest)
    }

    private mutating func append(_ bytes: some Collection<UInt8>) throws {
        guard line.count + bytes.count <= limit else {
            throw PrefsError(.tooLarge, "A frame of the stream is larger than \(limit) bytes.")
        }
        line.append(contentsOf: bytes)
    }
}
